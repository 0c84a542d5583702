"""Open a PDF from bytes, or say in one line why it cannot be parsed (the rejects reason)."""

from __future__ import annotations

import re

from interleaf.errors import DocumentError
from interleaf.pdf.mupdf import pymupdf


def mupdf_exceptions() -> tuple[type[Exception], ...]:
    """What MuPDF raises for bytes it cannot read: its own error classes, FileDataError (a
    RuntimeError) from the document wrapper, ValueError for empty or malformed image data. A function,
    not a constant: naming MuPDF's classes imports PyMuPDF (interleaf/pdf/mupdf.py)."""
    return (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError)


# A MuPDF warning that says something was not read ("format error: ...", "cannot load object ..."),
# as opposed to one that says it was repaired or ignored on the way.
_ERROR = re.compile(r"error|cannot|failed|overflow", re.IGNORECASE)


def mupdf_errors(limit: int = 3) -> str:
    """The distinct errors MuPDF reported (as warnings) since the last call, in one line, and
    forget them: MuPDF recovers from most damage by skipping what it cannot read, saying so only there."""
    lines = pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines()
    errors = list(dict.fromkeys(line.strip() for line in lines if _ERROR.search(line)))
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(errors[:limit]) + more


def empty_pdf_store() -> None:
    """Drop what MuPDF keeps of the documents it read (decoded page images, fonts): its store holds
    up to 256 MB a process after their documents are closed. Called when a page worker's job ends,
    since the next job may be another document's (measured: 75 MB held after rendering every third
    page of the two scale/ manuals at 100 dpi, closed)."""
    pymupdf.TOOLS.store_shrink(100)


def open_pdf(data: bytes, name: str) -> pymupdf.Document:
    if not data:
        raise DocumentError(name, "empty file (0 bytes)")
    head = data[:1024].lstrip()
    if b"%PDF-" not in head:
        preview = data[:16].decode("latin-1").encode("unicode_escape").decode()
        raise DocumentError(name, f"not a PDF: no %PDF- header (starts with {preview!r})")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except mupdf_exceptions() as exc:
        raise DocumentError(name, f"damaged PDF, cannot be opened: {exc}") from exc
    if doc.needs_pass:
        doc.close()
        raise DocumentError(name, "encrypted: the PDF needs a password to open")
    if doc.page_count == 0:
        doc.close()
        raise DocumentError(name, "no pages: the file is truncated or its page tree is damaged")
    return doc


def metadata_title(doc: pymupdf.Document) -> str | None:
    title = (doc.metadata or {}).get("title") or ""
    title = " ".join(title.split())
    # Producers often leave a file name or a placeholder as the title.
    if (
        len(title) < 4
        or title.lower() in {"untitled", "title"}
        or title.lower().endswith((".doc", ".docx", ".jpg", ".pdf", ".tex"))
    ):
        return None
    return title


def page_count_and_title(data: bytes, name: str) -> tuple[int, str | None]:
    """Open once to validate the file (bad input fails here, with its reason) and read what every
    parser needs before its page work starts."""
    doc = open_pdf(data, name)
    try:
        return doc.page_count, metadata_title(doc)
    finally:
        doc.close()
