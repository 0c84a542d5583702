"""Shape of the retrieve stage's configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RerankConfig(Strict):
    backend: Literal["none", "lexical", "flag", "cross-encoder", "qwen3"] = "lexical"
    model: str | None = None  # id or local path of a cross-encoder / Qwen3-Reranker
    top_n: int = Field(40, ge=1)  # fused candidates the reranker sees
    batch_size: int = Field(16, ge=1)
    # a reranker's score is blended with the fused rank, so one bad call cannot sink a strong hit
    blend: float = Field(0.5, ge=0, le=1)


class LMMFilterConfig(Strict):
    """V-RAG's LMM filter: ask a VLM "Can this image provide answers to this question?" per image."""

    enabled: bool = False
    model: str | None = None
    top_m: int = Field(20, ge=1)


class RetrieveConfig(Strict):
    scope: Literal["doc", "corpus"] = "doc"
    depth: int = Field(50, ge=1)  # hits kept per retriever x clause
    rrf_k: float = Field(10.0, gt=0)  # Cormack et al. use 60; 10 measured best here (qa_dev, with describe text)
    clause_fusion: Literal["max", "sum"] = "max"  # how one retriever's clause lists combine
    # context size -> [images, texts]; MMDocRAG §4.8: 15 = 5 + 10, 20 = 8 + 12
    quotas: dict[int, tuple[int, int]] = {5: (2, 3), 10: (4, 6), 15: (5, 10), 20: (8, 12)}
    budgets: list[int] = [5, 10, 15, 20]
    rerank: RerankConfig = RerankConfig()
    lmm_filter: LMMFilterConfig = LMMFilterConfig()
