"""RapidOCR with its bundled PP-OCR det/rec/cls models: fully offline, the default OCR engine."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from interleaf.describe.config import RapidOcrConfig
from interleaf.describe.protocol import OcrLine
from interleaf.parse.ocr import rapidocr_engine

# One crop at a time per process: two describe tasks in flight must not oversubscribe the cores.
_LOCK = threading.Lock()


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, config: RapidOcrConfig) -> None:
        self.config = config

    def fingerprint_config(self) -> dict[str, Any]:
        import rapidocr

        return {"engine": "rapidocr", "version": getattr(rapidocr, "__version__", "3")}

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        with _LOCK:
            result = rapidocr_engine(self.config.threads)(image_bgr)
        if result.boxes is None or result.txts is None:
            return []
        lines = []
        for box, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            if not str(text).strip():
                continue
            pts = np.asarray(box, dtype=np.float32).reshape(-1, 2)
            x0, y0 = pts.min(axis=0)
            x1, y1 = pts.max(axis=0)
            lines.append(OcrLine((float(x0), float(y0), float(x1), float(y1)), str(text).strip(), float(score)))
        return lines
