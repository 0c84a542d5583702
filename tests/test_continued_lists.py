"""A bulleted list cut by a page break is read on into the next page (continued_lists.py), on the
dev half's phone guide (../shared/benchmarks/mmlongbench-dev): its page 11 ends "For other devices,
perform the following settings: • Vision: ...", and page 12 opens, under its running head, with
"• Bluetooth device: ..." and then a note of another form ("• Device+ does not support ...")."""

from __future__ import annotations

import pyarrow as pa

from interleaf.generate.continued_lists import continued_lists, list_goes_on
from interleaf.generate.offline_units import Unit, units_of
from interleaf.generate.protocol import ContextQuote
from interleaf.parse.config import LayoutConfig
from interleaf.parse.layout.parser import parse_page
from tests.support.dev_half import dev_pdf

GUIDE = "nova_y70.pdf"
PAGES = (10, 11)  # 0-based: the guide's pages 11 and 12


def _quotes() -> pa.Table:
    """The two pages' quotes as the warehouse stores them (the columns continued_lists reads)."""
    rows = []
    with dev_pdf(GUIDE) as document:
        for page in PAGES:
            for n, q in enumerate(parse_page(document[page], LayoutConfig()).quotes):
                rows.append(
                    {
                        "quote_id": f"p{page}-q{n}",
                        "doc_id": "guide",
                        "page_idx": page,
                        "layout_idx": n,
                        "kind": q.kind,
                        "text": q.text or "",
                        "caption": None,
                    }
                )
    return pa.Table.from_pylist(rows)


def _ending(quotes: pa.Table) -> str:
    return next(r["quote_id"] for r in quotes.to_pylist() if r["text"].startswith("Currently, Device+ supports"))


def _units(quotes: pa.Table, ids: list[str]) -> list[Unit]:
    by_id = {r["quote_id"]: r for r in quotes.to_pylist()}
    context = [
        ContextQuote(i, "text", n + 1, "guide", GUIDE, by_id[i]["page_idx"], by_id[i]["kind"], by_id[i]["text"])
        for n, i in enumerate(ids)
    ]
    return [u for q in context for u in units_of(q)]


def test_the_list_a_page_ends_goes_on_with_the_next_page_s_items_of_its_form() -> None:
    quotes = _quotes()
    ending = _ending(quotes)
    continued = continued_lists(quotes, [ending])
    # past page 11's foot ("9") and page 12's running head ("Essentials")
    (after,) = continued.values()
    assert next(r for r in quotes.to_pylist() if r["quote_id"] == after)["text"].startswith("• Bluetooth device:")
    # the note under it joined to its quote, as the parser joins them where the guide prints the
    # same two pages again (its pages 23 and 24): the note, of another form, is no item of the list
    rows = quotes.to_pylist()
    note = next(r["text"] for r in rows if r["text"].startswith("• Device+ does not"))
    for r in rows:
        if r["quote_id"] == after:
            r["text"] = f"{r['text']}\n{note}"
    units = _units(pa.Table.from_pylist(rows), [ending, after])
    written = [u for u in units if u.quote.quote_id == ending]
    going_on = list_goes_on(written, units, continued)
    assert [u.text[:19] for u in going_on] == ["• Bluetooth device:"]
    # a group that stops short of the quote's last sentence does not end the list
    assert list_goes_on(written[:1], units, continued) == []


def test_a_quote_ending_otherwise_or_a_page_opening_otherwise_goes_on_with_nothing() -> None:
    quotes = _quotes()
    others = [r["quote_id"] for r in quotes.to_pylist() if r["page_idx"] == PAGES[0]]
    assert set(continued_lists(quotes, others)) == {_ending(quotes)}
    # the next page opening with a note of another form: the list ended with its page
    rows = quotes.to_pylist()
    for r in rows:
        if r["text"].startswith("• Bluetooth device:"):
            r["text"] = "• Pairing two phones is not supported."
    assert continued_lists(pa.Table.from_pylist(rows), [_ending(quotes)]) == {}
