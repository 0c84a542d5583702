"""Running headers and footers the parser kept as content.

A long manual prints the same line at the top or bottom of every page ("Service Codes and
Forms 7.4.12 page 47", "Operations Manual", "Cat. No. 40417K (03-05-2031)"). Where the layout
model calls it text, it is indexed as a quote, and a question that names the manual matches it on
every page: the top of the ranking fills with page furniture. A line is furniture when, with its
numbers folded, it recurs in the top or bottom band of many pages.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from interleaf.evidence import fold

# The bands where running heads and feet live: the top and bottom 12% of the page (the IRS manual's
# heads sit at 52-67 pt and feet at 742-773 pt of 792; the game manual's page numbers at 775 of 842).
BAND = 0.12
# A line is furniture when it recurs on at least this share of the document's pages, and on at least
# MIN_PAGES of them: a heading repeated on two pages of a short paper is not.
MIN_SHARE = 0.05
MIN_PAGES = 4
MAX_WORDS = 16  # a running line is short; a paragraph that happens to sit near the foot is not furniture
_DIGITS = re.compile(r"\d+")


def line_key(text: str) -> str:
    """A running line with its numbers folded: "page 47" and "page 48" are the same line."""
    return _DIGITS.sub("#", fold(text))


def running_furniture(quotes: Sequence[dict[str, Any]], pages: Sequence[dict[str, Any]]) -> set[str]:
    """Quote ids of one document's non-furniture quotes that are running heads or feet."""
    height = {int(p["page_idx"]): float(p["height"]) for p in pages}
    n_pages = max(len(height), 1)
    seen: dict[str, set[int]] = defaultdict(set)
    candidates: list[tuple[str, str]] = []
    for q in quotes:
        text = q.get("text") or ""
        if q.get("furniture") or not text.strip() or len(text.split()) > MAX_WORDS:
            continue
        h = height.get(int(q["page_idx"]))
        if h is None:
            continue
        top, bottom = q["bbox"][1], q["bbox"][3]
        if bottom <= BAND * h or top >= (1 - BAND) * h:
            key = line_key(text)
            seen[key].add(int(q["page_idx"]))
            candidates.append((q["quote_id"], key))
    needed = max(MIN_PAGES, MIN_SHARE * n_pages)
    return {qid for qid, key in candidates if len(seen[key]) >= needed}
