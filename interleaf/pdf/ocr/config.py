"""Shapes of the OCR engines' settings (the describe stage's `describe.ocr.<engine>` sections)."""

from __future__ import annotations

from pydantic import Field

from interleaf.strict import Strict


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
