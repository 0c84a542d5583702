"""Shapes of the OCR engines' settings (the describe stage's `describe.ocr.<engine>` sections)."""

from __future__ import annotations

from pydantic import Field

from interleaf.strict import Strict


class RapidOcrConfig(Strict):
    # ONNX Runtime threads of each RapidOCR read, in each page worker (describe's readings run there).
    # Measured on 2 cores, the 400-page manual's ingest on 2 page workers: describe 235 s with 1
    # thread, 335 s with 2 (the same readings); RapidOCR's own default (-1: every core) is worse still.
    threads: int = Field(1, ge=1, le=64)


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
