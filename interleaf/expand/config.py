"""Shape of the expand stage's configuration."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from interleaf.strict import Strict


class LLMConfig(Strict):
    """A local causal LM through transformers (id or path; `gguf_file` for GGUF weights)."""

    model: str | None = None
    gguf_file: str | None = None
    device: str = "cpu"  # where the model runs: cpu, cuda, cuda:1, mps
    n_queries: int = Field(3, ge=1, le=10)  # RefLVQA Table 14: its prompt sets how many queries to write
    max_new_tokens: int = Field(96, ge=8)

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(exclude={"device"})


class ClauseWeights(Strict):
    """A clause's weight in the fusion, by the kind of clause it is."""

    question: float = Field(1.0, ge=0)
    part: float = Field(0.7, ge=0)
    # the question's names and numbers alone, by `make fit-retrieval` (page recall@5 on MMLongBench-Doc's
    # dev half and qa_dev, chosen on held-out folds by document; docs/measured/retrieval-fit.md): 0.25
    # is chosen in most folds, 0.5 ties with it and 0 and 1 fall below. Higher, a page that merely
    # repeats the names outranks the one that answers
    keywords: float = Field(0.25, ge=0)
    reference: float = Field(0.5, ge=0)
    prf: float = Field(0.3, ge=0)
    llm: float = Field(0.7, ge=0)
    # a chat's earlier user turns (the server's chat endpoint); not measured (no dev set has
    # conversations): below the question's parts, so the follow-up itself leads
    context: float = Field(0.5, ge=0)


class ExpandConfig(Strict):
    # none switches expansion off, pseudo-relevance feedback included: the question is its only clause
    backend: Literal["rules", "llm", "none"] = "rules"
    max_clauses: int = Field(6, ge=1)
    keywords: bool = True  # a clause of the entities, numbers and references alone (rules, and llm's fallback)
    prf: bool = False  # pseudo-relevance feedback: terms of the first pass's top quotes
    prf_docs: int = Field(3, ge=1)
    prf_terms: int = Field(8, ge=1)
    weights: ClauseWeights = ClauseWeights()
    llm: LLMConfig = LLMConfig()

    @model_validator(mode="after")
    def _llm_has_a_model(self) -> Self:
        if self.backend == "llm" and not self.llm.model:
            raise ValueError("expand.backend=llm needs expand.llm.model (a transformers id or a local path)")
        return self

    def fingerprint_config(self) -> dict[str, Any]:
        out = self.model_dump(exclude={"llm"})
        return out | ({"llm": self.llm.fingerprint_config()} if self.backend == "llm" else {})
