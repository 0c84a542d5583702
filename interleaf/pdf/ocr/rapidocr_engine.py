"""RapidOCR with its bundled PP-OCR det/rec/cls models: fully offline, the default OCR engine.

Used by the layout parser for pages without a usable text layer and by the describe stage for the
crops of figures and tables.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

import numpy as np

from interleaf.pdf.ocr.config import RapidOcrConfig
from interleaf.pdf.ocr.images import check_image, pad_to_aspect
from interleaf.pdf.ocr.protocol import OcrLine

# One image at a time per process: two tasks in flight must not oversubscribe the cores.
_LOCK = threading.Lock()
# Longer strips get a white margin: the detector scales the short side up to 736 px (see pad_to_aspect).
MAX_ASPECT = 16.0


@functools.cache
def rapidocr_engine(threads: int) -> Any:
    from rapidocr import RapidOCR

    engine = RapidOCR(
        params={
            "Global.log_level": "warning",
            # The default (-1) takes every core in each worker process and thrashes 2 cores.
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
    )
    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    return engine


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, config: RapidOcrConfig) -> None:
        self.config = config

    def fingerprint_config(self) -> dict[str, Any]:
        import rapidocr

        return {"engine": "rapidocr", "version": getattr(rapidocr, "__version__", "3")}

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        check_image(image_bgr)
        image = pad_to_aspect(image_bgr, MAX_ASPECT)
        with _LOCK:
            result = rapidocr_engine(self.config.threads)(image)
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
