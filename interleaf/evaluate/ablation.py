"""Ablation variants of the retrieval pipeline, each a set of config overrides: a variant is just
another configuration of the same stages, stored under its own fingerprints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from interleaf.config import Settings, set_dotted


@dataclass(frozen=True)
class Variant:
    name: str
    overrides: dict[str, Any] = field(default_factory=dict)  # dotted config key -> value

    def apply(self, settings: Settings) -> Settings:
        raw = settings.model_dump()
        for key, value in (self.overrides | {"evaluate.variant": self.name}).items():
            # as --set names it: a list's item by its name or position (index.retrievers.minilm.weight)
            set_dotted(raw, key, value, f"{key}={value!r}")
        return Settings.model_validate(raw)


FULL = Variant("full")


def ablation_variants(settings: Settings) -> list[Variant]:
    """Each retriever alone (its own ranking: no expansion, no section references, no page fusion,
    no rerank), then with expansion, then the fusion with each step alone, then the whole pipeline
    and the whole pipeline without section references. The LMM filter, when enabled, runs in `full`
    only, plus a `full, no LMM filter` beside it."""
    names = [r.name for r in settings.index.retrievers]
    bare = {
        "retrieve.page_weight": 0.0,
        "retrieve.reference_weight": 0.0,
        "retrieve.rerank.backend": "none",
        "retrieve.lmm_filter.enabled": False,
    }
    references = {"retrieve.reference_weight": settings.retrieve.reference_weight}
    no_expand = {"expand.backend": "none"}
    variants = [Variant(f"{n} alone", bare | no_expand | {"retrieve.retrievers": [n]}) for n in names]
    variants += [Variant(f"{n} + expansion", bare | {"retrieve.retrievers": [n]}) for n in names]
    variants += [
        Variant("fused, no expansion, no rerank", bare | no_expand),
        Variant("fused + expansion", bare),
        Variant("fused + section references", bare | no_expand | references),
        Variant("fused + page fusion", bare | no_expand | {"retrieve.page_weight": settings.retrieve.page_weight}),
        Variant("fused + rerank", bare | no_expand | {"retrieve.rerank.backend": settings.retrieve.rerank.backend}),
    ]
    if settings.retrieve.reference_weight > 0:
        variants.append(Variant("full, no section references", {"retrieve.reference_weight": 0.0}))
    if settings.retrieve.lmm_filter.enabled:
        variants.append(Variant("full, no LMM filter", {"retrieve.lmm_filter.enabled": False}))
    variants.append(FULL)
    return variants
