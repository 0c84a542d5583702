"""Rerankers by name, as chosen in config (`retrieve.rerank.backend`)."""

from __future__ import annotations

from interleaf.retrieve.config import RerankConfig
from interleaf.retrieve.protocol import Reranker


def get_reranker(config: RerankConfig) -> Reranker | None:
    if config.backend == "none":
        return None
    if config.backend == "lexical":
        from interleaf.retrieve.lexical import LexicalReranker

        return LexicalReranker()
    if not config.model:
        raise ValueError(f"reranker {config.backend!r} needs `retrieve.rerank.model`")
    from interleaf.retrieve import cross_encoders as ce

    if config.backend == "flag":
        return ce.FlagCrossEncoder(config.model, config.batch_size)
    if config.backend == "cross-encoder":
        return ce.STCrossEncoder(config.model, config.batch_size)
    if config.backend == "qwen3":
        return ce.Qwen3Reranker(config.model, config.batch_size)
    raise ValueError(f"unknown reranker {config.backend!r}")
