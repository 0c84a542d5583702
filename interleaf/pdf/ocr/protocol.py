"""The OCR engine's contract: a BGR image in, lines of text with their boxes and confidences out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class OcrLine:
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the image's pixels
    text: str
    conf: float


class OcrError(ValueError):
    """An image an engine cannot read (empty, not an 8-bit BGR array): a property of the crop, which
    callers record as a reject. Any other exception out of `read` is a bug and must propagate."""


class OcrEngine(Protocol):
    name: str  # the source label written in `ocr_source`: rapidocr, paddleocr

    def fingerprint_config(self) -> dict[str, Any]: ...

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        """Lines in the engine's order; raises OcrError for an image it cannot read."""
        ...
