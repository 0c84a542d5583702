"""A bulleted list cut by a page break, read on into the next page.

A guide's list often runs over the foot of its page: "The kettle pairs with these hubs: • Vireo
hub: ..." ends one page and "• Kestrel speaker: ..." opens the next. The parser
makes two quotes of it, and retrieval may bring either alone; an answer that writes the first
page's items and stops at its foot lists half of what was asked. So where a quote of the context
ends in a bulleted item and the next page opens (past its running head) with an item of the same
bullet and form, that quote joins the context, and the answer that writes the list's last item
goes on with the items that continue it (offline_writing.py), each cited to its own quote.

The same form: the same bullet glyph, and, where the last item is a term set before a colon
("• Vireo hub: Hold the dial ..."), items that are too; the first item of another form (a note, "•
Two kettles cannot share one hub.") ends the list. Worth, on the MMLongBench-Doc dev half:
one answerable question more right (of 234), a list of device kinds cut by a page break; the corpus
dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from interleaf.generate.document_rows import rows_by_document
from interleaf.generate.offline_units import Unit

# a line opening with a bullet glyph: the glyph, and whether a term and a colon follow it
_ITEM = re.compile(r"^\s*([•●▪■◦‣⁃∙·])\s*(?:(?P<term>[^\s:][^:.]{0,48}):\s)?\S")
# page furniture between the two halves: the foot of one page, the head of the next
_FURNITURE = frozenset({"header", "footer"})
# a running head the parser kept as text ("Essentials", "Smart Features"): a line this short
# without a bullet (set by reading the dev half's manuals, not fitted)
_RUNNING_HEAD_WORDS = 4


def item_form(line: str) -> tuple[str, bool] | None:
    """(the bullet glyph, whether a term and a colon open the item) of a bulleted line, else None."""
    m = _ITEM.match(line)
    return (m.group(1), m.group("term") is not None) if m else None


def _last_item(text: str) -> str:
    """The bulleted item a text ends with, its first line; "" where the text ends otherwise. A line
    after an item's first goes on with it where it opens in small letters or the line before it
    does not end a sentence ("• Vireo hub: Hold the dial until the\nkettle's light turns blue.")."""
    item, before = "", ""
    for line in (line.strip() for line in (text or "").splitlines()):
        if not line:
            continue
        if item_form(line) is not None:
            item = line
        elif item and not (line[:1].islower() or not before.endswith((".", "!", "?", ":"))):
            item = ""  # the text goes on past its list
        before = line
    return item


def _first_line(text: str) -> str:
    return next((line for line in (text or "").splitlines() if line.strip()), "")


def _between(row: dict[str, Any]) -> bool:
    """Furniture between a page's foot and the next page's first item."""
    text = (row["text"] or "").strip()
    return row["kind"] in _FURNITURE or (len(text.split()) <= _RUNNING_HEAD_WORDS and item_form(text) is None)


def _continuation(rows: Sequence[dict[str, Any]], at: int) -> str | None:
    """The quote id that goes on with the list `rows[at]` ends in, or None."""
    ending = item_form(_last_item(rows[at]["text"]))
    if ending is None:
        return None
    page = rows[at]["page_idx"]
    for row in rows[at + 1 :]:
        if row["page_idx"] > page + 1:
            return None
        if _between(row):
            continue
        opening = item_form(_first_line(row["text"]))
        return row["quote_id"] if row["page_idx"] == page + 1 and opening == ending else None
    return None


def continued_lists(quotes: pa.Table, quote_ids: Iterable[str]) -> dict[str, str]:
    """quote id -> the id of the quote that continues the bulleted list it ends with on the next
    page (see the module docstring), for those of `quote_ids` that end so."""
    wanted = set(quote_ids)
    if not wanted:
        return {}
    own = quotes.select(["quote_id", "doc_id", "text"]).filter(
        pc.is_in(quotes.column("quote_id"), value_set=pa.array(sorted(wanted), pa.string()))
    )
    ending = {r["doc_id"] for r in own.to_pylist() if item_form(_last_item(r["text"]))}
    out: dict[str, str] = {}
    for rows in rows_by_document(quotes, ending).values():
        rows.sort(key=lambda r: (r["page_idx"], r["layout_idx"]))
        for at, row in enumerate(rows):
            if row["quote_id"] in wanted and (found := _continuation(rows, at)) is not None:
                out[row["quote_id"]] = found
    return out


def list_goes_on(written: Sequence[Unit], units: Sequence[Unit], continued: Mapping[str, str]) -> list[Unit]:
    """The items that continue the list a written group of sentences ends, where the group holds the
    last sentence of its quote and the quote ends in a list the next page goes on with (`continued`:
    quote id -> the id of the quote continuing it): that quote's sentences from its first, while
    each opens an item of the same form as the last one written; else none."""
    if not written:
        return []
    quote = written[0].quote
    after = continued.get(quote.quote_id)
    own = [u for u in units if u.quote is quote and u.kind == "sentence"]
    if after is None or not own or max(own, key=lambda u: u.position) not in written:
        return []
    form = item_form(_last_item(quote.text))
    out = []
    for unit in sorted(
        (u for u in units if u.quote.quote_id == after and u.kind == "sentence"), key=lambda u: u.position
    ):
        if item_form(unit.text) != form:
            break
        out.append(unit)
    return out
