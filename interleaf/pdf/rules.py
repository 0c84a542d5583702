"""Ruling lines of a page region: the horizontal and vertical lines a table is drawn with.

They tell a table's structure where the text alone is ambiguous (interleaf.describe.table_structure):
the line under a multi-row header, the lines between groups of rows that share a label, the line
under a header spanning several columns, the lines between column groups. Vector tables draw them
as thin strokes or filled rectangles (`vector_rules`); scanned tables as runs of dark pixels
(`raster_rules`, in the image's pixels, the frame OCR boxes are in).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from interleaf.pdf.mupdf import cv2, pymupdf

Box = tuple[float, float, float, float]

MAX_THICKNESS_PT = 2.0  # a stroke or filled rectangle up to 2 pt thick is a rule, not a shaded cell


@dataclass(frozen=True)
class Segment:
    """A horizontal rule at `at` (y) from `start` to `end` (x), or a vertical one at x from y to y."""

    at: float
    start: float
    end: float

    @property
    def length(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Rules:
    horizontal: tuple[Segment, ...] = ()
    vertical: tuple[Segment, ...] = ()

    def inside(self, box: Box, pad: float = 2.0) -> Rules:
        """The parts of the rules inside the box (grown by `pad`)."""
        x0, y0, x1, y1 = box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad
        return Rules(
            tuple(_clip(s, y0, y1, x0, x1) for s in self.horizontal if _overlaps(s, y0, y1, x0, x1)),
            tuple(_clip(s, x0, x1, y0, y1) for s in self.vertical if _overlaps(s, x0, x1, y0, y1)),
        )


def _overlaps(s: Segment, lo: float, hi: float, start: float, end: float) -> bool:
    return lo <= s.at <= hi and s.end > start and s.start < end


def _clip(s: Segment, _lo: float, _hi: float, start: float, end: float) -> Segment:
    return Segment(s.at, max(s.start, start), min(s.end, end))


def merge(segments: Iterable[Segment], tolerance: float) -> tuple[Segment, ...]:
    """Collinear pieces (a rule drawn cell by cell) joined where they touch or nearly do."""
    out: list[Segment] = []
    for s in sorted(segments, key=lambda s: (round(s.at / tolerance), s.start)):
        last = out[-1] if out else None
        if last and abs(last.at - s.at) <= tolerance and s.start <= last.end + tolerance:
            out[-1] = Segment(last.at, last.start, max(last.end, s.end))
        else:
            out.append(s)
    return tuple(out)


def vector_rules(page: pymupdf.Page) -> Rules:
    """Every thin straight line drawn on the page, in PDF points."""
    horizontal, vertical = [], []
    for drawing in page.get_drawings():
        for item in drawing["items"]:
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                rect = pymupdf.Rect(min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
            elif item[0] == "re":
                rect = pymupdf.Rect(item[1])
            else:
                continue
            if rect.height <= MAX_THICKNESS_PT and rect.width > 3 * MAX_THICKNESS_PT:
                horizontal.append(Segment((rect.y0 + rect.y1) / 2, rect.x0, rect.x1))
            elif rect.width <= MAX_THICKNESS_PT and rect.height > 3 * MAX_THICKNESS_PT:
                vertical.append(Segment((rect.x0 + rect.x1) / 2, rect.y0, rect.y1))
    return Rules(merge(horizontal, 1.0), merge(vertical, 1.0))


def raster_rules(image_bgr: np.ndarray, min_share: float = 0.12) -> Rules:
    """Dark straight runs at least `min_share` of the image's width (height) long and thin, in
    pixels: a morphological opening with a long line keeps ruling lines and drops the text."""
    if image_bgr.size == 0:
        return Rules()
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    dark = (gray < 150).astype(np.uint8)
    height, width = dark.shape
    thickness = max(3, round(min(height, width) * 0.01))

    def runs(kernel: tuple[int, int], horizontal: bool) -> list[Segment]:
        lines = cv2.morphologyEx(dark, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, kernel))
        count, _labels, stats, _ = cv2.connectedComponentsWithStats(lines)
        found = []
        for x, y, w, h, _area in stats[1:count]:
            if horizontal and h <= thickness:
                found.append(Segment(y + h / 2, float(x), float(x + w)))
            elif not horizontal and w <= thickness:
                found.append(Segment(x + w / 2, float(y), float(y + h)))
        return found

    return Rules(
        merge(runs((max(int(width * min_share), 8), 1), True), thickness),
        merge(runs((1, max(int(height * min_share), 8)), False), thickness),
    )
