"""What the renderers are given: one answer with its context, and how to load its pictures.

The renderers never read the warehouse or a PDF themselves: the caller hands them loaders, so the
same code renders answers from a stored run, from `interleaf ask`, or from a test's own quotes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from interleaf.generate.protocol import CheckedAnswer, ContextQuote, ImageLoader

BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class PageImage:
    """A whole page, rendered once; quote boxes are drawn over it by the page that shows it."""

    data: bytes  # PNG or JPEG
    width: float  # the page as shown (rotation applied), in PDF points
    height: float
    # stored quote boxes are unrotated PDF points (top-left origin); this maps them to shown points
    matrix: tuple[float, float, float, float, float, float] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)

    def box_percent(self, bbox: BBox) -> BBox:
        """The box as (left, top, width, height) in percent of the shown page, clipped to it."""
        a, b, c, d, e, f = self.matrix
        corners = [(x * a + y * c + e, x * b + y * d + f) for x in (bbox[0], bbox[2]) for y in (bbox[1], bbox[3])]
        xs = [min(max(x, 0.0), self.width) for x, _ in corners]
        ys = [min(max(y, 0.0), self.height) for _, y in corners]
        return (
            100 * min(xs) / self.width,
            100 * min(ys) / self.height,
            100 * (max(xs) - min(xs)) / self.width,
            100 * (max(ys) - min(ys)) / self.height,
        )


# (doc_id, page_idx) -> the page; raises OSError when the PDF cannot be read
PageLoader = Callable[[str, int], PageImage]


@dataclass(frozen=True)
class AnswerView:
    """One checked answer and everything needed to show it."""

    question_id: str
    question: str
    checked: CheckedAnswer
    quotes: tuple[ContextQuote, ...]  # the context the answer was generated from
    generator: str  # offline, openai, transformers
    model: str | None = None
    seconds: float = 0.0
    error: str | None = None  # generation failed: shown instead of an answer
    load_image: ImageLoader | None = None  # img_path -> the crop's bytes; None: crops are not shown
    load_page: PageLoader | None = None  # None: page images are not shown
    short_answer: str | None = None  # the value asked for, or "Not answerable" (None: the generator gave none)


_CAPTION_NAME = re.compile(r"^\s*((?:Table|Figure|Fig\.|Chart|Equation|Eq\.|Algorithm|Listing)\s*[A-Z]?[\d.]*\d)", re.I)


def quote_title(quote: ContextQuote) -> str:
    """A short name for an image quote: its caption's `Table 2`, else the caption's start, else its kind."""
    caption = (quote.caption or "").strip()
    named = _CAPTION_NAME.match(caption)
    if named:
        return named.group(1)
    if caption:
        return caption if len(caption) <= 60 else caption[:57].rstrip() + "…"
    return quote.kind.capitalize()


def quote_place(quote: ContextQuote) -> str:
    """`report-2031.pdf p.4` (pages shown 1-based)."""
    return f"{quote.doc_name} p.{quote.page_idx + 1}"


def image_label(quote: ContextQuote) -> str:
    """`image 2: Table 2 — report-2031.pdf p.4`."""
    return f"image {quote.number}: {quote_title(quote)} — {quote_place(quote)}"


class QuoteIndex:
    """Context quotes by how an answer cites them (`[3]` is text 3, `image2` is image 2)."""

    def __init__(self, quotes: tuple[ContextQuote, ...] | list[ContextQuote]) -> None:
        self.by_id = {q.quote_id: q for q in quotes}
        self._by_number = {(q.modality, q.number): q for q in quotes}

    def text(self, number: int) -> ContextQuote | None:
        return self._by_number.get(("text", number))

    def image(self, number: int) -> ContextQuote | None:
        return self._by_number.get(("image", number))
