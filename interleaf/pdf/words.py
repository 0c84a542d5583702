"""Words of a page, from its text layer or from OCR, with the checks that decide between them.

A control character of the text layer standing in for a glyph (a minus sign a font's ToUnicode map
leaves out) is resolved here, so quote text, OCR-text and table Markdown all keep it
(interleaf.pdf.glyphs says how).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from interleaf.pdf.glyphs import REPLACEMENT, StandIn, draws_nothing, has_stand_ins, read_by_ocr, stand_ins
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.ocr.protocol import OcrEngine, OcrLine

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


def text_layer_words(page: pymupdf.Page, ocr: OcrEngine | None = None) -> tuple[list[Word], int]:
    """Visible words of the text layer, and how many invisible ones were dropped. Control
    characters standing in for glyphs are resolved (from the font, else by `ocr` when given)."""
    textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)
    raw = [
        Word(x0, y0, x1, y1, text, block, line, order)
        for x0, y0, x1, y1, text, block, line, order in page.get_text("words", sort=False, textpage=textpage)
    ]
    if has_stand_ins(textpage.extractText()):
        raw = with_stand_ins(page, raw, stand_ins(page, textpage), ocr)
    invisible = _invisible_rects(page)
    words: list[Word] = []
    hidden = 0
    for w in raw:
        if not w.text.strip():
            continue
        if invisible and any(r.x0 - 1 <= w.cx <= r.x1 + 1 and r.y0 - 1 <= w.cy <= r.y1 + 1 for r in invisible):
            hidden += 1
            continue
        words.append(w)
    return words, hidden


def with_stand_ins(
    page: pymupdf.Page, words: list[Word], glyphs: Sequence[StandIn], ocr: OcrEngine | None
) -> list[Word]:
    """The words with each stand-in glyph put back: glued to the word it touches on its line (a
    sign before a number, a symbol after one), else a word of its own. A glyph its font does not
    resolve is read by OCR with that word; one OCR cannot read either is U+FFFD in the word (the
    word is not what the page shows) and left out when it stands alone (as word extraction did).
    One that draws nothing is a space, and one drawn over a word's letters has no place of its
    own: both stay out."""
    words = list(words)
    glyphs = [g for g in glyphs if g.char is not None or not draws_nothing(page, g)]
    # right to left: a glyph before another glyph finds the word the other one was glued to
    for glyph in sorted(glyphs, key=lambda g: -g.box[0]):
        x0, y0, x1, y1 = glyph.box
        touch = max((y1 - y0) * 0.25, 0.5)
        same_line = [i for i, w in enumerate(words) if (w.block, w.line) == (glyph.block, glyph.line)]
        if any(min(x1, words[i].x1) - max(x0, words[i].x0) > (x1 - x0) / 2 for i in same_line):
            continue  # drawn over a word's own letters: no place of its own in the text
        after = next((i for i in same_line if abs(words[i].x0 - x1) <= touch), None)
        before = next((i for i in same_line if abs(x0 - words[i].x1) <= touch), None)
        at = after if after is not None else before
        # a glyph touching no word is not read: no known text checks what OCR reads (glyphs.py, path 3)
        if glyph.char is None and ocr is not None and at is not None:
            cell = words[at]
            box = (min(x0, cell.x0), min(y0, cell.y0), max(x1, cell.x1), max(y1, cell.y1))
            glyph = read_by_ocr(page, glyph, box, cell.text, at == after, ocr)
        if at is None and glyph.char is None:
            continue  # alone and unnamed (a list bullet of a private font): nothing to write
        char = glyph.char or REPLACEMENT
        if at is None:
            # its place in the line: ties with the word to its right break on x0 (regions sort by order, x0)
            order = sum(1 for i in same_line if words[i].x0 < x0)
            words.append(Word(x0, y0, x1, y1, char, glyph.block, glyph.line, order))
            continue
        w = words[at]
        text = char + w.text if at == after else w.text + char
        words[at] = replace(w, x0=min(w.x0, x0), y0=min(w.y0, y0), x1=max(w.x1, x1), y1=max(w.y1, y1), text=text)
    return words


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
