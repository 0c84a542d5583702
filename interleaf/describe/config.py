"""Shape of the describe stage's configuration; values live in configs/*.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RapidOcrConfig(Strict):
    threads: int = Field(2, ge=1, le=64)  # onnxruntime intra-op threads; the default (-1) oversubscribes


class PaddleOcrConfig(Strict):
    """PaddleOCR 3.x with local model folders (it cannot fetch models on machines without a hub)."""

    text_detection_model_dir: str | None = None
    text_detection_model_name: str | None = None
    text_recognition_model_dir: str | None = None
    text_recognition_model_name: str | None = None
    textline_orientation_model_dir: str | None = None
    use_textline_orientation: bool = False
    lang: str | None = None
    device: str = "cpu"


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
        backend = getattr(self, self.backend).model_dump(exclude={"threads"})
        return {**self.model_dump(exclude={"rapidocr", "paddleocr"}), self.backend: backend}


class TransformersConfig(Strict):
    model: str = "Qwen/Qwen2.5-VL-3B-Instruct"  # hub id or local folder
    device: str = "cpu"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    batch_size: int = Field(4, ge=1)
    max_new_tokens: int = Field(512, ge=1)
    min_pixels: int = Field(64 * 28 * 28, ge=28 * 28)
    max_pixels: int = Field(1024 * 28 * 28, ge=28 * 28)

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(exclude={"device", "batch_size"})


class OpenAIConfig(Strict):
    """Any OpenAI-compatible Chat Completions server: vLLM, SGLang, Ollama, a hosted API."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "Qwen/Qwen2.5-VL-7B-Instruct"
    api_key_env: str = "OPENAI_API_KEY"  # the key is read from this variable, never from config
    concurrency: int = Field(4, ge=1, le=256)
    timeout_s: float = Field(120.0, gt=0)
    retries: int = Field(3, ge=0, le=10)  # on 429, 5xx and transport errors
    backoff_s: float = Field(1.0, ge=0)  # doubled after each retry
    max_tokens: int = Field(512, ge=1)
    temperature: float = Field(0.0, ge=0, le=2)

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(include={"base_url", "model", "max_tokens", "temperature"})


class DescribeConfig(Strict):
    describer: Literal["offline", "transformers", "openai"] = "offline"
    prompt: str = "describe_image"  # prompts/<name>.md, for the VLM describers
    kinds: list[str] = ["figure", "table", "equation"]  # image quotes described
    ocr: OcrConfig = OcrConfig()
    transformers: TransformersConfig = TransformersConfig()
    openai: OpenAIConfig = OpenAIConfig()
    max_references: int = Field(3, ge=0)  # sentences referring to a figure/table kept by `offline`

    def ocr_fingerprint(self) -> dict[str, Any]:
        return self.ocr.fingerprint_config()

    def describer_fingerprint(self) -> dict[str, Any]:
        if self.describer == "offline":
            return {"describer": "offline", "max_references": self.max_references}
        return {"describer": self.describer, self.describer: getattr(self, self.describer).fingerprint_config()}

    def fingerprint_config(self) -> dict[str, Any]:
        return {"kinds": sorted(self.kinds), "ocr": self.ocr_fingerprint(), **self.describer_fingerprint()}
