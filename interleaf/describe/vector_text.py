"""Text of a figure or table from the PDF's text layer, when its box holds vector text.

A chart drawn as vectors carries its labels, ticks and legend as real text: reading them from
the text layer is exact and ~100x faster than OCR. A box covered by a raster image (a photo, a
screenshot, a scan) holds its text in pixels, and is left to OCR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from interleaf.pdf.rules import Rules
from interleaf.pdf.words import Box, Word


@dataclass(frozen=True)
class PageText:
    """What the describe stage needs of one page: visible words, raster image rectangles and the
    ruling lines drawn on it (a table's structure)."""

    words: tuple[Word, ...]
    image_rects: tuple[Box, ...]
    rules: Rules = field(default_factory=Rules)


def raster_share(box: Box, image_rects: Sequence[Box]) -> float:
    """Share of the box's area covered by raster images. Summed, not the largest one: a figure is
    often tiled from several image strips (overlaps are rare and small, hence the cap at 1)."""
    x0, y0, x1, y1 = box
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    covered = 0.0
    for rx0, ry0, rx1, ry1 in image_rects:
        w = max(0.0, min(x1, rx1) - max(x0, rx0))
        h = max(0.0, min(y1, ry1) - max(y0, ry0))
        covered += w * h / area
    return min(covered, 1.0)


def use_vector_text(
    words: Sequence[Word], box: Box, image_rects: Sequence[Box], min_words: int, max_raster: float
) -> bool:
    return len(words) >= min_words and raster_share(box, image_rects) < max_raster
