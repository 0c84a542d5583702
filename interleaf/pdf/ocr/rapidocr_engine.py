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


def _bounded_preprocess(detector: Any, max_side: int) -> Any:
    """RapidOCR's detector input sizing (the short side scaled up to `limit_side_len`), held to
    `max_side` pixels on the longer side. The boxes found are mapped back to the image RapidOCR
    was given, and the lines cropped from it: only detection sees the smaller image."""
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    class BoundedDetPreProcess(DetPreProcess):
        def resize(self, img: np.ndarray) -> np.ndarray | None:
            h, w = img.shape[:2]
            upscale = max(1.0, self.limit_side_len / max(min(h, w), 1))
            if max(h, w) * upscale <= max_side:
                return super().resize(img)
            return DetPreProcess(max_side, "max", self.mean, self.std).resize(img)

    return lambda: BoundedDetPreProcess(detector.limit_side_len, detector.limit_type, detector.mean, detector.std)


@functools.cache
def rapidocr_engine(threads: int, det_max_side: int | None = None) -> Any:
    from rapidocr import RapidOCR

    engine = RapidOCR(
        params={
            # an image with no text in it is an outcome (a reject row), not a warning on the terminal
            "Global.log_level": "error",
            # The default (-1) takes every core in each worker process and thrashes 2 cores.
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            # Lines one at a time, not padded to the widest of 6: a batch of 6 lines 1,984 px wide
            # (at the recognizer's 48 px height) takes +665 MB, one line +75 MB, and is as fast a
            # line. benchmarks/bench_ocr.py, 6 -> 1 a batch: OCR CPU 153 -> 133 s, largest read
            # +895 -> +592 MB, word recall against the text layer of 40 crops 0.939 -> 0.938.
            "Rec.rec_batch_num": 1,
        }
    )
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    if det_max_side is not None:
        # rapidocr==3.10.0 (pinned) builds the detector's preprocessing per call from get_preprocess
        detector = engine._load_det_model()
        detector.get_preprocess = _bounded_preprocess(detector, det_max_side)
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
            result = rapidocr_engine(self.config.threads, self.config.det_max_side)(image)
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
