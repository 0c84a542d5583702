"""Pixels of a page: PNG crops of regions, BGR arrays for the models and OCR engines, and where
the page's raster images lie."""

from __future__ import annotations

import numpy as np

from interleaf.pdf.mupdf import pymupdf

Box = tuple[float, float, float, float]


def _bgr(pix: pymupdf.Pixmap) -> np.ndarray:
    rgb = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    return np.ascontiguousarray(rgb[:, :, ::-1])  # OpenCV-trained models (PP-OCR, PicoDet) take BGR


def render_bgr(page: pymupdf.Page, dpi: float, clip: Box | None = None) -> np.ndarray:
    """The page, or the part of it inside `clip` (PDF points), as a BGR array at `dpi`; a clip
    outside the page gives an empty (0 x 0) array, which OCR engines refuse with OcrError."""
    rect = page.rect if clip is None else pymupdf.Rect(clip) & page.rect
    if rect.is_empty:
        return np.zeros((0, 0, 3), dtype=np.uint8)
    return _bgr(page.get_pixmap(clip=rect, dpi=dpi, colorspace=pymupdf.csRGB, alpha=False))


def render_bgr_sized(page: pymupdf.Page, width: int, height: int, clip: Box | None = None) -> np.ndarray:
    """The whole page, or the part of it inside `clip` (PDF points), stretched to width x height
    pixels (a model's fixed input size; a clip's edges may round it a pixel off)."""
    rect = page.rect if clip is None else pymupdf.Rect(clip)
    matrix = pymupdf.Matrix(width / rect.width, height / rect.height)
    if clip is None:
        return _bgr(page.get_pixmap(matrix=matrix, colorspace=pymupdf.csRGB, alpha=False))
    return _bgr(page.get_pixmap(matrix=matrix, clip=rect, colorspace=pymupdf.csRGB, alpha=False))


def crop_png(page: pymupdf.Page, bbox: Box, dpi: int) -> bytes | None:
    """The region rendered from the PDF as PNG, or None when it is (nearly) empty. The page must be
    in the frame the box is in (parsers store unrotated boxes and unrotate the page first)."""
    clip = pymupdf.Rect(bbox) & page.rect
    if clip.is_empty or clip.width < 2 or clip.height < 2:
        return None
    return page.get_pixmap(clip=clip, dpi=dpi, colorspace=pymupdf.csRGB, alpha=False).tobytes("png")


def image_rects(page: pymupdf.Page) -> tuple[Box, ...]:
    """Where raster images are drawn on the page, in PDF points."""
    return tuple((float(a), float(b), float(c), float(d)) for a, b, c, d in (i["bbox"] for i in page.get_image_info()))
