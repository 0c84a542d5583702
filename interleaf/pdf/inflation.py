"""How far a page's content streams inflate, measured before MuPDF reads the page.

A decompression bomb is a few KB of Flate data that inflate to GiBs: MuPDF inflates a content
stream again at every pass over the page (text, drawings, render), so a page whose 40 KB inflate to
16 GiB held its worker until `parse.limits.page_timeout_s` killed it (120 s by default, every time
the file was ingested). Counting the inflated bytes with zlib, in steps of a MiB and stopping at the
limit, takes a second at most, and a page of ordinary content a third of a millisecond.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

# A page's content streams together, and each form it draws. The corpus's 1,185 pages inflate to
# 1.4 MB at most (cancer-guide.pdf's page 6), counted in 0.4 s for all of them; a vector map or a
# CAD sheet may reach tens of MB. Past this a page is not read: MuPDF would take minutes over it.
MAX_CONTENT_MB = 256
_STEP = 1 << 20  # bytes inflated at a time
_FLATE = {"/FlateDecode", "/Fl"}
_MAX_LEVELS = 16  # Flate filters of one stream that are followed, one call deep each


def _flate_levels(doc: Any, xref: int) -> int | None:
    """How many Flate filters the stream has, or None when another filter is among them (its size
    is not measured here: MuPDF's page timeout still holds)."""
    kind, value = doc.xref_get_key(xref, "Filter")
    if kind == "null":
        return 0
    names = [value] if kind == "name" else re.findall(r"/[^\s/\[\]<>()]+", value) if kind == "array" else None
    if names is None or len(names) > _MAX_LEVELS or not all(name in _FLATE for name in names):
        return None
    return len(names)


def _inflated(data: bytes, levels: int, limit: int) -> int:
    """The size of `data` after `levels` inflations, counted until past `limit`."""
    inflaters = [zlib.decompressobj() for _ in range(levels)]
    size = 0

    def feed(level: int, chunk: bytes) -> None:
        nonlocal size
        if level == levels:
            size += len(chunk)
            return
        while chunk and size <= limit:
            feed(level + 1, inflaters[level].decompress(chunk, _STEP))
            chunk = inflaters[level].unconsumed_tail

    feed(0, data)
    return size


def content_past_limit(page: Any, limit_mb: float = MAX_CONTENT_MB) -> str | None:
    """Why the page is not read, when its content inflates past `limit_mb`; else None (a stream
    zlib cannot inflate is left to MuPDF, which reads what it can of it)."""
    doc = page.parent
    limit = int(limit_mb * 2**20)
    total = 0
    for xref in [*page.get_contents(), *(form[0] for form in page.get_xobjects())]:
        levels = _flate_levels(doc, xref)
        if levels is None:
            continue
        try:
            total += _inflated(doc.xref_stream_raw(xref), levels, limit - total)
        except zlib.error:
            continue
        if total > limit:
            return f"its content inflates past {limit_mb:g} MB (a decompression bomb?): not read"
    return None
