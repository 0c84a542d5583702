"""Shape of the evaluate stage's configuration."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from interleaf.generate.config import GenerateConfig, GenerateOpenAIConfig, GenerateTransformersConfig
from interleaf.strict import Strict


class JudgeConfig(Strict):
    """LLM-as-judge (MMDocRAG A.2, MCiteBench §4, MAVIS §4) with any generator backend. `none`: the
    judge metrics are reported as not computed, never estimated."""

    backend: Literal["none", "openai", "transformers"] = "none"
    families: list[Literal["mmdocrag", "mcitebench", "mavis"]] = Field(
        default_factory=lambda: ["mmdocrag", "mcitebench", "mavis"]
    )
    max_tokens: int = Field(512, ge=16)  # room for a short rationale before the verdict
    images: bool = False  # send the cited crops to a multimodal judge
    openai: GenerateOpenAIConfig = GenerateOpenAIConfig()
    transformers: GenerateTransformersConfig = GenerateTransformersConfig()

    def as_generate(self) -> GenerateConfig:
        return GenerateConfig(backend=self.backend, openai=self.openai, transformers=self.transformers)  # type: ignore[arg-type]

    def fingerprint_config(self) -> dict[str, Any]:
        if self.backend == "none":
            return {"backend": "none"}
        model = {
            "openai": self.openai.model_dump(include={"model", "max_tokens", "temperature"}),
            "transformers": self.transformers.model_dump(exclude={"device", "batch_size"}),
        }[self.backend]
        return self.model_dump(include={"backend", "families", "max_tokens", "images"}) | {self.backend: model}


class EvaluateConfig(Strict):
    variant: str = "full"  # the label of this configuration in eval tables (ablations name theirs)
    judge: JudgeConfig = JudgeConfig()
    # `interleaf eval --compare A B` fails when a metric drops by more than its margin (a CI gate)
    gate: dict[str, float] = Field(default_factory=lambda: {"quote_f1": 0.02, "recall@10": 0.02})
