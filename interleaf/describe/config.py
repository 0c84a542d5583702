"""Shape of the describe stage's configuration and its defaults (configs/default.yaml is written from them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from interleaf.pdf.ocr.config import PaddleOcrConfig, RapidOcrConfig
from interleaf.strict import Strict
from interleaf.vlm.config import ChatServerConfig, QwenVLConfig

CroppedKind = Literal["figure", "table", "equation"]  # interleaf.kinds.CROPPED_KINDS: the quotes with a crop


class OcrConfig(Strict):
    backend: Literal["rapidocr", "paddleocr"] = "rapidocr"
    # The crop is rendered again from the PDF at this resolution: 144-dpi crops lose small print.
    dpi: int = Field(216, ge=72, le=600)
    min_conf: float = Field(0.5, ge=0, le=1)  # OCR lines below this confidence are dropped
    # Vector text is used instead of OCR when the box holds at least this many words and raster
    # images cover less than `max_raster_share` of it (exact, and ~100x faster than OCR).
    min_vector_words: int = Field(3, ge=1)
    max_raster_share: float = Field(0.3, ge=0, le=1)
    rapidocr: RapidOcrConfig = RapidOcrConfig()
    paddleocr: PaddleOcrConfig = PaddleOcrConfig()

    def fingerprint_config(self) -> dict[str, Any]:
        backend = getattr(self, self.backend).model_dump(exclude={"threads", "device"})  # speed, not output
        return {**self.model_dump(exclude={"rapidocr", "paddleocr"}), self.backend: backend}


class TransformersConfig(QwenVLConfig):
    max_new_tokens: int = Field(512, ge=1)

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(exclude={"device", "batch_size"})


class OpenAIConfig(ChatServerConfig):
    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(include={"base_url", "model", "max_tokens", "temperature"})


class DescribeConfig(Strict):
    describer: Literal["offline", "transformers", "openai"] = "offline"
    prompt: str = "describe_image"  # prompts/<name>.md, for the VLM describers
    kinds: list[CroppedKind] = Field(default_factory=lambda: ["figure", "table", "equation"])  # read and described
    ocr: OcrConfig = OcrConfig()
    transformers: TransformersConfig = TransformersConfig()
    openai: OpenAIConfig = OpenAIConfig()
    max_references: int = Field(3, ge=0)  # sentences referring to a figure/table kept by `offline`
    # Readings are made in runs of this many pages holding image quotes, one page-worker job each
    # (describe/reading.py). Speed only, never output: not fingerprinted.
    pages_per_range: int = Field(8, ge=1)

    def ocr_fingerprint(self) -> dict[str, Any]:
        return self.ocr.fingerprint_config()

    def describer_fingerprint(self) -> dict[str, Any]:
        if self.describer == "offline":
            return {"describer": "offline", "max_references": self.max_references}
        return {"describer": self.describer, self.describer: getattr(self, self.describer).fingerprint_config()}

    def fingerprint_config(self) -> dict[str, Any]:
        return {"kinds": sorted(self.kinds), "ocr": self.ocr_fingerprint(), **self.describer_fingerprint()}
