"""Rerankers and LMM filters by name, as chosen in config (`retrieve.rerank.backend`,
`retrieve.lmm_filter.backend`)."""

from __future__ import annotations

from interleaf.prompts import load_prompt
from interleaf.retrieve.config import LMMFilterConfig, RerankConfig
from interleaf.retrieve.protocol import ImageFilter, Reranker


def get_reranker(config: RerankConfig) -> Reranker | None:
    if config.backend == "none":
        return None
    if config.backend == "lexical":
        from interleaf.retrieve.lexical import LexicalReranker

        return LexicalReranker()
    if not config.model:  # RerankConfig refuses a model backend without one; this narrows the type
        raise ValueError(f"reranker {config.backend!r} needs `retrieve.rerank.model`")
    from interleaf.retrieve import cross_encoders as ce

    if config.backend == "flag":
        return ce.FlagCrossEncoder(config.model, config.batch_size, config.device)
    if config.backend == "cross-encoder":
        return ce.STCrossEncoder(config.model, config.batch_size, config.device)
    if config.backend == "qwen3":
        return ce.Qwen3Reranker(config.model, config.batch_size, config.device)
    raise ValueError(f"unknown reranker {config.backend!r}")


def get_image_filter(config: LMMFilterConfig) -> ImageFilter | None:
    """None when the filter is off (the default): retrieval then never loads a VLM."""
    if not config.enabled:
        return None
    prompt = load_prompt(config.prompt)
    if config.backend == "transformers":
        from interleaf.retrieve.transformers_filter import TransformersImageFilter

        return TransformersImageFilter(config.transformers, prompt, config.threshold)
    if config.backend == "openai":
        from interleaf.retrieve.openai_filter import OpenAIImageFilter

        return OpenAIImageFilter(config.openai, prompt)
    raise ValueError(f"unknown LMM filter backend {config.backend!r}")
