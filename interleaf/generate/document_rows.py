"""The quotes of a few documents as Python rows, for the answer steps that read a question's whole
document rather than its retrieved context (item_count.py, part_titles.py, listed_items.py, statement_values.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

COLUMNS = ("quote_id", "doc_id", "page_idx", "layout_idx", "kind", "text", "caption")
# the quote kinds whose lines may open with a part's or an item's label, and of them those that head one
LINED = frozenset({"title", "header", "text", "list", "reference"})
HEADINGS = frozenset({"title", "header"})


def rows_by_document(quotes: pa.Table, doc_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """doc_id -> its quotes' rows (`COLUMNS`), for the documents `doc_ids`; filtered in Arrow first,
    so that a warehouse of many documents is not turned into Python rows whole."""
    wanted = sorted(set(doc_ids))
    by_doc: dict[str, list[dict[str, Any]]] = {d: [] for d in wanted}
    if not wanted:
        return by_doc
    own = quotes.select(list(COLUMNS)).filter(
        pc.is_in(quotes.column("doc_id"), value_set=pa.array(wanted, pa.string()))
    )
    for r in own.to_pylist():
        by_doc[r["doc_id"]].append(r)
    return by_doc
