"""What MinerU's live output and its content_list files share: MinerU's block types, page
geometry (boxes given as fractions of the page as displayed), PNG crops, and table HTML as text."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Protocol

from interleaf.parse.protocol import ParsedPage, ParsedQuote
from interleaf.pdf.mupdf import pymupdf

BBOX_SCALE = 1000.0  # content-list boxes are in thousandths of the page
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# MinerU's page furniture. Page numbers become header or footer by where they sit; side-margin
# text (arXiv stamps, running chapter names) keeps kind "text" but is furniture all the same.
FURNITURE_TYPES = frozenset({"header", "footer", "page_number", "aside_text"})

# Content-list types whose quote text is the item's `text`, and the quote kind each becomes.
TEXT_ITEM_KINDS = {
    "text": "text",
    "header": "header",
    "footer": "footer",
    "aside_text": "text",
    "page_footnote": "text",  # footnotes at the foot of the page are content, not furniture
    "ref_text": "reference",
    "phonetic": "text",
}


@dataclass(frozen=True)
class PageGeometry:
    """Where MinerU measures a page and where Interleaf stores it.

    MinerU's boxes are fractions of the page as displayed (rotation applied); Interleaf stores
    boxes in unrotated PDF points, as the layout parser does, so that crops and text-layer words
    agree. `derotation` maps displayed points to unrotated ones."""

    page_idx: int
    rotation: int
    width: float  # unrotated, in points
    height: float
    shown_width: float  # as displayed
    shown_height: float
    derotation: tuple[float, float, float, float, float, float] = (1, 0, 0, 1, 0, 0)

    def to_points(self, fractions: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = fractions
        w, h = self.shown_width, self.shown_height
        shown = pymupdf.Rect(x0 * w, y0 * h, x1 * w, y1 * h)
        rect = (shown * pymupdf.Matrix(*self.derotation)).normalize()
        return (round(rect.x0, 2), round(rect.y0, 2), round(rect.x1, 2), round(rect.y1, 2))


def unrotate_page(page: pymupdf.Page) -> PageGeometry:
    """Read the page's geometry, then set its rotation to 0 so crops use the stored frame."""
    shown = page.rect
    derotation = page.derotation_matrix
    rotation = page.rotation
    if rotation:
        page.set_rotation(0)
    return PageGeometry(
        page_idx=page.number,
        rotation=rotation,
        width=page.rect.width,
        height=page.rect.height,
        shown_width=shown.width,
        shown_height=shown.height,
        derotation=(derotation.a, derotation.b, derotation.c, derotation.d, derotation.e, derotation.f),
    )


def parsed_page(page: pymupdf.Page, geometry: PageGeometry, ocr_used: bool = False) -> ParsedPage:
    # Any text, visible or not, counts as a text layer (an OCR layer under a scan is one), as in
    # the layout parser; plain get_text is ~330 pages/s, far cheaper than word extraction.
    return ParsedPage(
        page_idx=geometry.page_idx,
        width=geometry.width,
        height=geometry.height,
        rotation=geometry.rotation,
        has_text_layer=bool(page.get_text("text").strip()),
        ocr_used=ocr_used,
    )


def furniture_kind(mineru_type: str, y_center_fraction: float) -> str:
    """The quote kind of a furniture block; a page number is a header in the top half."""
    if mineru_type == "page_number":
        return "header" if y_center_fraction < 0.5 else "footer"
    return TEXT_ITEM_KINDS.get(mineru_type, "text")


def looks_like_html(body: str) -> bool:
    # MinerU flash sometimes gives a table as space-aligned plain text instead of HTML.
    return "<table" in body[:200].lower()


class _TableText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_text(html: str) -> str:
    """A row per line, cells separated by tabs: readable, and a needle that spans two cells
    still matches once white space is folded."""
    parser = _TableText()
    parser.feed(html)
    parser.close()
    return "\n".join("\t".join(row) for row in parser.rows if any(row))


def table_text_and_html(body: str) -> tuple[str, str | None]:
    if looks_like_html(body):
        return html_table_text(body), body
    return body.strip(), None


class MappedBlock(Protocol):
    """A MinerU block already mapped to a quote kind, from either source."""

    kind: str
    text: str
    caption: str | None
    footnote: str | None
    html: str | None
    furniture: bool


def mapped_quote(
    page_idx: int, block: MappedBlock, bbox: tuple[float, float, float, float], png: bytes | None
) -> ParsedQuote:
    return ParsedQuote(
        page_idx=page_idx,
        kind=block.kind,
        bbox=bbox,
        text=block.text,
        text_source="mineru" if block.text else "none",
        caption=block.caption,
        footnote=block.footnote,
        html=block.html,
        furniture=block.furniture,
        png=png,
    )
