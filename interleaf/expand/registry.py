"""Expanders by name, as chosen in config (`expand.backend`)."""

from __future__ import annotations

from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Expander


def get_expander(config: ExpandConfig) -> Expander | None:
    if config.backend == "none":
        return None
    if config.backend == "rules":
        from interleaf.expand.rules import RulesExpander

        return RulesExpander(config)
    if config.backend == "llm":
        from interleaf.expand.llm import LLMExpander

        return LLMExpander(config)
    raise ValueError(f"unknown expand backend {config.backend!r}")
