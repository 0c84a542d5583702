"""Words of a page, from its text layer or from OCR, with the checks that decide between them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pymupdf

from interleaf.pdf.ocr.protocol import OcrLine

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    block: int
    line: int
    order: int  # position within the line

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


_TRAILING = ".,;:!?)]}\"'’”%"
_LEADING = "([{\"'‘“$€£#"
_NUMBER = re.compile(r"^[+\-−]?\d[\d.,/:\-–]*[a-zA-Z%]{0,3}$")


def _is_clean_token(token: str) -> bool:
    core = token.strip(_TRAILING).lstrip(_LEADING)
    if not core:
        return False
    if _NUMBER.match(core):
        return True
    core = core.replace("-", "").replace("'", "").replace("’", "").replace("·", "")
    return core.isalpha() and (len(core) > 1 or core.lower() in {"a", "i", "y", "à", "é", "o", "e"})


def clean_token_share(words: Sequence[Word]) -> float:
    if not words:
        return 0.0
    return sum(_is_clean_token(w.text) for w in words) / len(words)


def _invisible_rects(page: pymupdf.Page) -> list[pymupdf.Rect]:
    rects = []
    for span in page.get_texttrace():
        # Render mode 3 draws nothing; an OCR layer under a scan is written this way.
        if span.get("type") == 3 or span.get("opacity", 1.0) == 0:
            rects.append(pymupdf.Rect(span["bbox"]))
    return rects


def text_layer_words(page: pymupdf.Page) -> tuple[list[Word], int]:
    """Visible words of the text layer, and how many invisible ones were dropped."""
    raw = page.get_text("words", sort=False)
    invisible = _invisible_rects(page)
    words: list[Word] = []
    hidden = 0
    for x0, y0, x1, y1, text, block, line, order in raw:
        if not text.strip():
            continue
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if invisible and any(r.x0 - 1 <= cx <= r.x1 + 1 and r.y0 - 1 <= cy <= r.y1 + 1 for r in invisible):
            hidden += 1
            continue
        words.append(Word(x0, y0, x1, y1, text, block, line, order))
    return words, hidden


def text_layer_usable(words: Sequence[Word], hidden: int, min_clean_share: float) -> bool:
    """False for no text, a mostly invisible layer (an OCR layer we redo), or garbage text."""
    if not words:
        return False
    if hidden > len(words):
        return False
    return clean_token_share(words) >= min_clean_share


def words_in_box(words: Sequence[Word], box: Box, pad: float = 1.0) -> list[Word]:
    """The words whose centre lies in the box (grown by `pad` on every side)."""
    x0, y0, x1, y1 = box
    return [w for w in words if x0 - pad <= w.cx <= x1 + pad and y0 - pad <= w.cy <= y1 + pad]


def ocr_words(lines: Sequence[OcrLine], scale: float = 1.0) -> list[Word]:
    """OCR lines as words, boxes multiplied by `scale` (pixels to points: 72 / dpi). An OCR line is
    one unit of text with no word boxes inside, so each becomes one word, and its own block."""
    return [
        Word(ln.box[0] * scale, ln.box[1] * scale, ln.box[2] * scale, ln.box[3] * scale, ln.text, i, 0, 0)
        for i, ln in enumerate(lines)
    ]
