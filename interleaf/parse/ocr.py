"""RapidOCR (bundled PP-OCR det + rec models) turned into page words in PDF points."""

from __future__ import annotations

import functools
import logging

import numpy as np

from interleaf.parse.words import Word


@functools.cache
def rapidocr_engine(threads: int = 1):
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


def ocr_lines(image_bgr: np.ndarray, threads: int = 1) -> list[tuple[np.ndarray, str, float]]:
    """(4x2 box in pixels, text, confidence) for each line found, in the engine's order."""
    result = rapidocr_engine(threads)(image_bgr)
    if result.boxes is None or result.txts is None:
        return []
    return [
        (np.asarray(box, dtype=np.float32), str(text), float(score))
        for box, text, score in zip(result.boxes, result.txts, result.scores, strict=True)
        if str(text).strip()
    ]


def ocr_words(image_bgr: np.ndarray, scale_to_pt: float, threads: int = 1) -> list[Word]:
    """OCR lines as words (one per line) in PDF points; each line is its own block."""
    words = []
    for i, (box, text, _score) in enumerate(ocr_lines(image_bgr, threads)):
        xs, ys = box[:, 0] * scale_to_pt, box[:, 1] * scale_to_pt
        words.append(Word(float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()), text, i, 0, 0))
    return words
