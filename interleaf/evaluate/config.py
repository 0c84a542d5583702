"""Shape of the evaluate stage's configuration."""

from __future__ import annotations

from interleaf.vlm.config import Strict


class EvaluateConfig(Strict):
    variant: str = "full"  # the label of this configuration in eval tables (ablations name theirs)
