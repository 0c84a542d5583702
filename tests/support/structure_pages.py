"""Real parse-stage rows for a few pages of a corpus PDF, for the structure tests.

The pages go through the real layout parser (rapid-layout + the text layer) and the parse stage's
own `to_tables`, so the rows are exactly what the warehouse's `quotes` and `pages` hold; parsing a
handful of pages instead of 400 keeps the tests in seconds.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from interleaf.parse.chunks import ChunkJob, ParsedPages, run_chunk
from interleaf.parse.config import LayoutConfig
from interleaf.parse.layout.parser import parse_page
from interleaf.parse.protocol import ParsedDocument
from interleaf.parse.stage import DocumentInput, to_tables
from tests.conftest import CORPUS

IRS = CORPUS / "scale" / "irs-manual-400p.pdf"
GAME = CORPUS / "scale" / "game-manual-619p.pdf"


@cache
def pdf_bytes(pdf: Path) -> bytes:
    return pdf.read_bytes()


def doc_id_of(pdf: Path) -> str:
    return hashlib.sha256(pdf_bytes(pdf)).hexdigest()


@cache
def parse_pages(pdf: Path, pages: tuple[int, ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(`quotes` rows, `pages` rows) of these 1-based pages."""
    data = pdf_bytes(pdf)
    indices = tuple(p - 1 for p in pages)
    results = run_chunk(ChunkJob(data, pdf.name, indices, (LayoutConfig(),) * len(indices), parse_page))
    done = ParsedPages()
    done.add(results)
    parsed = ParsedDocument(page_count=max(pages), title=None, pages=done.pages, quotes=done.quotes)
    out = to_tables(DocumentInput(doc_id_of(pdf), pdf.name, str(pdf), data), parsed, "layout", "test")
    return out.quotes.to_pylist(), out.pages.to_pylist()


def quote_with(quotes: list[dict[str, Any]], page: int, needle: str) -> dict[str, Any]:
    """The one quote on a 1-based page whose text holds `needle` (white space folded)."""
    folded = " ".join(needle.split()).casefold()
    found = [
        q for q in quotes if q["page_idx"] == page - 1 and folded in " ".join((q["text"] or "").split()).casefold()
    ]
    assert len(found) == 1, (page, needle, [q["text"][:60] for q in found])
    return found[0]
