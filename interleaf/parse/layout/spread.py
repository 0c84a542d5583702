"""Two printed pages on one PDF page (a spread): where a page's content splits at its fold.

Brochures and scanned books are often stored two printed pages to a sheet: a landscape page whose
left and right halves each hold a page of their own (columns, figures, a page number). Read as one
page, the layout model, whose input is portrait (608 x 800), sees the sheet squeezed to half its
width and calls it one figure, and the rows of its words run from one printed page into the other.
The parser reads a spread as two pages instead (layout/parser.py): regions found in each half's own
render, words and OCR lines grouped per half, reading order per half, left page first; quotes keep
the PDF page number and boxes in the sheet's coordinates.

A spread is told by its shape and its words (the text layer's, else OCR's of the whole page),
before any region is found: each half of the sheet is shaped like a printed page (portrait), no
word crosses the sheet's middle, words stand on both sides, and the band the words leave empty
around the middle reaches a few text lines on either side of it (the two pages' inner margins).
That band runs the sheet's height by construction: a heading or a footer printed across the middle
leaves no spread, and the page is read as one, as before. Pixels are not asked: a photo printed
across the fold, or a scanner's shadow of the binding, fills the gutter with ink while the text
still keeps to its own page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from interleaf.pdf.words import Word

Box = tuple[float, float, float, float]

# Each half of a spread is shaped like a printed page: at least this many times as high as it is
# wide (and the sheet landscape: halves under 2). Printed pages: US Letter 1.29, ISO A and B 1.41,
# half-letter 1.55. A 16:9 slide's halves are 1.125: five slides of the dev half's three decks
# (read by OCR) leave a word-free band around their middle (a chart's labels, a text beside a
# picture) and are one page each. Higher, and Letter spreads are read as one page; lower, and 16:9
# slides are cut in two. A 4:3 slide's halves (1.5) pass it (the dev half has none): its title
# mostly crosses the middle.
MIN_HALF_ASPECT = 1.2
# How far the words keep from the sheet's middle on each side, in text lines (the median word
# height), at least: two pages' inner margins, not a gap between words or a table's columns that
# happens to fall on the middle. On the dev half's 40 sheets printed as spreads (two brochures) the
# nearer side keeps 1.9 lines at least (23 pt at 12 pt text), mostly 2.6 or more. It does not tell
# every non-spread: the dev half's slides with words on both sides of a word-free middle keep 1 to 5
# lines (their shape tells them), an ordinary two-column page's gutter 0.6 to 2 (MAVIS's 1.5; its
# portrait shape tells it). Lower, and a landscape table's middle column gap splits it; higher, and
# spreads with narrow inner margins are read as one page.
MIN_MARGIN_LINES = 1.5


@dataclass(frozen=True)
class Gutter:
    """The band around a spread's fold that no word enters: the left page's words end at `x0`, the
    right page's begin at `x1`; the halves meet at `fold`, the sheet's middle."""

    x0: float
    x1: float
    fold: float

    def halves(self, width: float, height: float) -> tuple[Box, Box]:
        """The two printed pages, left then right, in the sheet's coordinates."""
        return (0.0, 0.0, self.fold, height), (self.fold, 0.0, width, height)

    def split(self, words: Sequence[Word]) -> tuple[list[Word], list[Word]]:
        """The words of the left page and of the right one."""
        return [w for w in words if w.cx < self.fold], [w for w in words if w.cx >= self.fold]


def find_gutter(words: Sequence[Word], width: float, height: float) -> Gutter | None:
    """The gutter of a spread, or None for a page read as one (see the module's docstring)."""
    if not MIN_HALF_ASPECT * width / 2 <= height < width or not words:
        return None
    fold = width / 2
    left = [w for w in words if w.x1 <= fold]
    right = [w for w in words if w.x0 >= fold]
    if not left or not right or len(left) + len(right) < len(words):
        return None  # one side empty, or a word across the middle
    heights = sorted(w.y1 - w.y0 for w in words)
    margin = MIN_MARGIN_LINES * heights[len(heights) // 2]
    x0, x1 = max(w.x1 for w in left), min(w.x0 for w in right)
    if fold - x0 < margin or x1 - fold < margin:
        return None
    return Gutter(x0, x1, fold)
