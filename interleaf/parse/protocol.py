"""The parse stage's swappable part: a Parser turns a PDF's bytes into pages and quotes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from interleaf.stage import PageMap
from interleaf.structure.outline import OutlineEntry

if TYPE_CHECKING:
    from interleaf.parse.facts import DocumentFacts


@dataclass
class ParsedPage:
    page_idx: int
    width: float
    height: float
    rotation: int
    has_text_layer: bool
    ocr_used: bool


@dataclass
class ParsedQuote:
    page_idx: int
    kind: str
    bbox: tuple[float, float, float, float]
    text: str
    text_source: str
    caption: str | None = None
    footnote: str | None = None
    html: str | None = None
    furniture: bool = False
    score: float | None = None
    png: bytes | None = None  # the crop, for figure / table / equation quotes


@dataclass
class ParsedDocument:
    page_count: int
    title: str | None  # the file's metadata title, when it is one (pdf/document.py metadata_title)
    pages: list[ParsedPage]
    quotes: list[ParsedQuote]  # in reading order within each page, pages in order
    page_rejects: list[tuple[int, str]] = field(default_factory=list)
    # pages not parsed, with a reason that names them ("timeout after 5 s: pages 9–40 not parsed")
    range_rejects: list[str] = field(default_factory=list)
    outline: tuple[OutlineEntry, ...] | None = None  # None: the parser did not read it (parse does)
    # the title the parser found on the first page; which one names the document: structure/title.py
    page_title: str | None = None


@dataclass
class PageResult:
    """One page's output of a parser's page-level work (what a `PageMap` job returns per page)."""

    page: ParsedPage
    quotes: list[ParsedQuote]


@dataclass(frozen=True)
class PageRejected:
    """In place of a PageResult: a page the parser could not read, and why."""

    page_idx: int
    reason: str


class Parser(Protocol):
    name: str

    def fingerprint_config(self) -> dict[str, Any]: ...

    def parse(
        self, pdf: bytes, name: str, page_map: PageMap = map, facts: DocumentFacts | None = None
    ) -> ParsedDocument:
        """`facts`: the document's, when they were read already (parse/facts.py); None: read here."""
        ...
