"""What every OCR engine does to an image before reading it."""

from __future__ import annotations

import numpy as np

from interleaf.pdf.ocr.protocol import OcrError


def check_image(image_bgr: np.ndarray) -> None:
    """Refuse what no engine reads, before it fails deep inside (RapidOCR divides by a zero side)."""
    if not isinstance(image_bgr, np.ndarray) or image_bgr.dtype != np.uint8:
        raise OcrError(f"expected an 8-bit image array, got {getattr(image_bgr, 'dtype', type(image_bgr).__name__)}")
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise OcrError(f"expected a BGR image of shape (height, width, 3), got {image_bgr.shape}")
    if min(image_bgr.shape[:2]) < 1:
        raise OcrError(f"empty image ({image_bgr.shape[1]} x {image_bgr.shape[0]} px)")


def pad_to_aspect(image_bgr: np.ndarray, max_aspect: float) -> np.ndarray:
    """White margin below or to the right of a strip longer than `max_aspect` : 1. Detectors scale
    the short side up to a fixed length (RapidOCR: 736 px), so a 1800 x 6 px strip would become a
    220,000 px wide page: measured, a 2 x 2000 crop asks for 2.5 GB. The margin leaves every box's
    coordinates as they were."""
    h, w = image_bgr.shape[:2]
    if w > max_aspect * h:
        pad = ((0, int(w / max_aspect) - h + 1), (0, 0), (0, 0))
    elif h > max_aspect * w:
        pad = ((0, 0), (0, int(h / max_aspect) - w + 1), (0, 0))
    else:
        return image_bgr
    return np.pad(image_bgr, pad, constant_values=255)
