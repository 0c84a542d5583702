"""Shape of the expand stage's configuration."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LLMConfig(Strict):
    """A local causal LM through transformers (id or path; `gguf_file` for GGUF weights)."""

    model: str | None = None
    gguf_file: str | None = None
    n_queries: int = Field(3, ge=1, le=10)  # RefLVQA Table 14: "generate {N} search queries"
    max_new_tokens: int = Field(96, ge=8)


class ExpandConfig(Strict):
    backend: Literal["rules", "llm", "none"] = "rules"
    max_clauses: int = Field(6, ge=1)
    keywords: bool = True  # a clause of the entities, numbers and references alone
    prf: bool = False  # pseudo-relevance feedback: terms of the first pass's top quotes
    prf_docs: int = Field(3, ge=1)
    prf_terms: int = Field(8, ge=1)
    weights: dict[str, float] = {
        "question": 1.0,
        "part": 0.7,
        "keywords": 0.5,
        "reference": 0.5,
        "prf": 0.3,
        "llm": 0.7,
    }
    llm: LLMConfig = LLMConfig()

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump()
