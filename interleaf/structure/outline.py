"""A PDF's outline (bookmarks): the section tree its author gave it, when it has one.

`read_outline` is the only function here that opens a PDF (PyMuPDF `get_toc(simple=False)`, a few
milliseconds for a 600-page manual); `entries_from_toc` is pure over the list PyMuPDF returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OutlineEntry:
    level: int  # 1 = top
    title: str
    page_idx: int  # 0-based; -1 when the entry points nowhere in this file
    y: float | None = None  # top of the destination in PDF points (top-left origin), when the entry gives one


def entries_from_toc(toc: list[list[Any]]) -> list[OutlineEntry]:
    """PyMuPDF's `get_toc()` rows ([level, title, page (1-based)] or with a 4th dict) -> entries.

    PyMuPDF gives the destination point in top-left coordinates; (0, 0) means "the page" (the IRS
    manual's outline points at pages only), read as no position."""
    out = []
    for row in toc:
        level, title, page = int(row[0]), " ".join(str(row[1]).split()), int(row[2])
        y = None
        if len(row) > 3 and isinstance(row[3], dict):
            to = row[3].get("to")
            if to is not None and (float(to[0]), float(to[1])) != (0.0, 0.0):
                y = float(to[1])
        if title:
            out.append(OutlineEntry(level, title, page - 1, y))
    return out


def read_outline(data: bytes) -> list[OutlineEntry]:
    """The outline of a PDF given as bytes; [] for a PDF without one (or one PyMuPDF cannot open)."""
    from interleaf.pdf.mupdf import pymupdf

    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            if doc.needs_pass:
                return []
            return entries_from_toc(doc.get_toc(simple=False))
    except (RuntimeError, ValueError):  # pymupdf.FileDataError derives from RuntimeError: a broken file has no outline
        return []
