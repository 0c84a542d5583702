"""Section trees of the two long manuals in scale/, on real pages through the real layout parser.

Every expected path below was read off the page itself (the heading, the running header "Exhibit
2.3.59-14 (Cont. 3)", the bookmark) before it was written here.
"""

from __future__ import annotations

from typing import Any

import pytest

from interleaf.structure.outline import OutlineEntry, entries_from_toc, read_outline
from interleaf.structure.sections import PATH_SEPARATOR, build_sections, section_paths
from tests.support.structure_pages import GAME, IRS, doc_id_of, parse_pages, pdf_bytes, quote_with

IRS_PAGES = (7, 8, 9, 50, 51, 52, 53)
GAME_PAGES = (20, 21, 22, 23, 166)


@pytest.fixture(scope="module")
def irs_outline() -> list[OutlineEntry]:
    return read_outline(pdf_bytes(IRS))


@pytest.fixture(scope="module")
def game_outline() -> list[OutlineEntry]:
    return read_outline(pdf_bytes(GAME))


def _build(pdf, pages: tuple[int, ...], toc: list[OutlineEntry]) -> tuple[list[dict[str, Any]], dict[str, str], list]:
    quotes, page_rows = parse_pages(pdf, pages)
    rows, section_of = build_sections(doc_id_of(pdf), toc, quotes, page_rows, pdf.name)
    return rows, section_of, quotes


def _section(rows: list[dict[str, Any]], section_of: dict[str, str], quote: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in rows if r["section_id"] == section_of[quote["quote_id"]])


def _well_formed(rows: list[dict[str, Any]], section_of: dict[str, str], quotes: list[dict[str, Any]]) -> None:
    ids = {r["section_id"] for r in rows}
    assert rows[0]["level"] == 0 and rows[0]["parent_id"] is None  # the document itself
    assert all(r["parent_id"] in ids for r in rows[1:])
    assert set(section_of) == {q["quote_id"] for q in quotes}  # every quote has its section
    assert sum(r["n_quotes"] for r in rows) == len(quotes)
    assert all(r["page_start"] <= r["page_end"] for r in rows)


def test_the_outline_gives_titles_pages_and_where_the_game_manual_places_each_entry(
    irs_outline: list[OutlineEntry], game_outline: list[OutlineEntry]
) -> None:
    assert len(irs_outline) == 134 and irs_outline[0] == OutlineEntry(1, "Manual Transmittal", 0, None)
    restoring = next(e for e in irs_outline if e.title.startswith("2.3.59.5 "))
    assert restoring.page_idx == 8 and restoring.y is None  # the IRS bookmarks point at pages only
    sword = next(e for e in game_outline if e.title == "The Summer Sword")
    quotes, _ = parse_pages(GAME, GAME_PAGES)
    title = next(q for q in quotes if q["page_idx"] == 22 and q["text"].strip() == "The Summer Sword")
    assert sword.page_idx == 22 and sword.y is not None and abs(sword.y - title["bbox"][1]) < 5
    # a toc row without a destination dict, as `get_toc(simple=True)` gives it
    assert entries_from_toc([[2, "  Part  A ", 3]]) == [OutlineEntry(2, "Part A", 2, None)]


def test_a_table_row_three_pages_into_an_exhibit_sits_in_that_exhibit(irs_outline: list[OutlineEntry]) -> None:
    rows, section_of, quotes = _build(IRS, IRS_PAGES, irs_outline)
    _well_formed(rows, section_of, quotes)
    # page 53 is "Exhibit 2.3.59-14 (Cont. 3)": its no-merge row names neither the exhibit nor its title
    row = quote_with(quotes, 53, "values 22-33 are entity no-merge")
    section = _section(rows, section_of, row)
    assert section["label"] == "Exhibit 2.3.59-14" and section["number"] == "2.3.59-14"
    assert section["path"] == "Exhibit 2.3.59-14 Command Code BMFOL Entity Display"
    assert section["page_start"] == 49 and section["source"] == "outline"  # it starts on page 50
    assert section_paths(rows, section_of)[row["quote_id"]] == section["path"]


def test_numbered_sections_nest_by_their_numbers(irs_outline: list[OutlineEntry]) -> None:
    rows, section_of, quotes = _build(IRS, IRS_PAGES, irs_outline)
    cutoff = quote_with(quotes, 9, "Weekly cut-off time for BMFOLB")
    assert _section(rows, section_of, cutoff)["path"] == "2.3.59.5 Restoring RRR Tax Modules to Master File"
    # the outline lists 2.3.59.1.6 at the same level as 2.3.59.1; its number puts it below
    terms = next(r for r in rows if r["number"] == "2.3.59.1.6")
    parent = next(r for r in rows if r["section_id"] == terms["parent_id"])
    assert parent["number"] == "2.3.59.1" and terms["level"] == parent["level"] + 1
    assert terms["path"] == "2.3.59.1 Program Scope and Objectives > 2.3.59.1.6 Terms/Definitions/Acronyms"


def test_without_an_outline_a_running_header_names_the_exhibit() -> None:
    rows, section_of, quotes = _build(IRS, (53,), [])
    _well_formed(rows, section_of, quotes)
    section = _section(rows, section_of, quote_with(quotes, 53, "values 22-33 are entity no-merge"))
    assert section["label"] == "Exhibit 2.3.59-14" and section["source"] == "running_header"
    assert section["path"].endswith("Exhibit 2.3.59-14 Command Code BMFOL Entity Display")


def test_without_an_outline_numbered_headings_build_the_tree() -> None:
    rows, section_of, quotes = _build(IRS, (7, 8, 9), [])
    _well_formed(rows, section_of, quotes)
    cutoff = _section(rows, section_of, quote_with(quotes, 9, "Weekly cut-off time for BMFOLB"))
    assert cutoff["number"] == "2.3.59.5" and cutoff["source"] == "heading"
    assert cutoff["path"].endswith("2.3.59.5 Restoring RRR Tax Modules to Master File")
    terms = next(r for r in rows if r["number"] == "2.3.59.1.6")
    assert terms["path"].endswith(
        f"2.3.59.1 Program Scope and Objectives{PATH_SEPARATOR}2.3.59.1.6 Terms/Definitions/Acronyms"
    )


def test_codex_entries_follow_the_bookmarks_inside_a_page(game_outline: list[OutlineEntry]) -> None:
    rows, section_of, quotes = _build(GAME, GAME_PAGES, game_outline)
    _well_formed(rows, section_of, quotes)
    sword = _section(rows, section_of, quote_with(quotes, 23, "crafted it in the winter of his lifetime"))
    assert sword["path"] == "Codex DAO > MAIN GAME > ITEMS > The Summer Sword" and sword["level"] == 4
    # the top of page 23 ends the entry that began on page 22
    carry = _section(rows, section_of, quote_with(quotes, 23, "Almost exclusively, the Shadows work"))
    assert carry["title"] == "Shadow of the Empire"
    # three entries start on page 166; each letter sits under its own
    first = _section(rows, section_of, quote_with(quotes, 166, "My chevaliers stand ready"))
    last = _section(rows, section_of, quote_with(quotes, 166, "postponed indefinitely, due to the darkspawn"))
    assert first["title"] == "Cailan's Documents - Page 1 of 3"
    assert last["title"] == "Cailan's Documents - Page 3 of 3"
    assert first["path"].startswith("Codex DAO > RETURN TO OSTAGAR > ")


def test_without_an_outline_title_quotes_start_the_codex_entries() -> None:
    rows, section_of, quotes = _build(GAME, (23,), [])
    sword = _section(rows, section_of, quote_with(quotes, 23, "crafted it in the winter of his lifetime"))
    assert sword["title"] == "The Summer Sword" and sword["label"] is None
