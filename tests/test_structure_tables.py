"""Tables continued across pages, and the header each part carries into the index (real IRS pages)."""

from __future__ import annotations

from interleaf.structure.context import contextual_header, item_context, short_path
from interleaf.structure.outline import read_outline
from interleaf.structure.sections import build_sections, section_paths
from interleaf.structure.tables import TablePart, header_row, link_table_parts
from tests.support.structure_pages import IRS, doc_id_of, parse_pages, pdf_bytes


def _tables_and_sections(pages: tuple[int, ...]) -> tuple[list[dict], dict[str, str], dict[str, str]]:
    quotes, page_rows = parse_pages(IRS, pages)
    rows, section_of = build_sections(doc_id_of(IRS), read_outline(pdf_bytes(IRS)), quotes, page_rows, "2.3.59")
    return quotes, section_of, section_paths(rows, section_of)


def test_the_parts_of_an_exhibit_table_are_linked_in_page_order() -> None:
    # Exhibit 2.3.59-17 runs from page 67 to 72; the parser gives one table quote on each of pages 68-72
    quotes, section_of, _ = _tables_and_sections((68, 69, 70, 71, 72))
    parts = link_table_parts(quotes, section_of)
    tables = sorted((q for q in quotes if q["kind"] == "table"), key=lambda q: q["page_idx"])
    assert [q["page_idx"] + 1 for q in tables] == [68, 69, 70, 71, 72]
    chain = [parts[q["quote_id"]] for q in tables]
    assert [p.part for p in chain] == [1, 2, 3, 4, 5]
    assert {p.table_id for p in chain} == {tables[0]["quote_id"]}
    # page 68's table opens on the column header row, which every later part carries too
    assert chain[0].header_row == "POSITION DESCRIPTION AND VALIDITY"
    assert all(p.header_row == chain[0].header_row and p.repeats_header for p in chain)


def test_a_table_in_the_next_exhibit_starts_a_new_table() -> None:
    # page 246 ends Exhibit 2.3.59-64, page 247 opens Exhibit 2.3.59-65: the same header row, another table
    quotes, section_of, _ = _tables_and_sections((246, 247))
    first = next(q for q in quotes if q["kind"] == "table" and q["page_idx"] == 246)
    assert (first["caption"] or "").startswith("Exhibit 2.3.59-65")
    assert link_table_parts(quotes, section_of)[first["quote_id"]].part == 1
    # without the section tree, the repeated header row alone would have joined them
    assert link_table_parts(quotes, None)[first["quote_id"]].part == 2


def test_header_rows_from_markdown_or_from_the_first_line_of_words() -> None:
    assert header_row("ignored", "| Model | F1 | EM |\n| --- | --- | --- |\n| DPR | 41.5 | 39.0 |") == "Model | F1 | EM"
    assert header_row("2.3.59\nPOSITION DESCRIPTION AND VALIDITY\n4 36-56 Master File") == (
        "POSITION DESCRIPTION AND VALIDITY"  # the page's section number above it is no header
    )
    assert header_row("1 01-05 Command Code: BMFOL\n1 06 Definer") is None  # a data row


def test_a_continued_part_carries_the_title_and_header_row_it_lacks() -> None:
    part = TablePart("q3", "q1", 3, "Exhibit 2.3.59-17 Command Code BMFOL Tax Module Display", "LINE POSITION", False)
    assert item_context(None, part) == [
        "Exhibit 2.3.59-17 Command Code BMFOL Tax Module Display (continued)",
        "LINE POSITION",
    ]
    assert item_context("Table 4: own caption", part)[0] == "Table 4: own caption"
    first = TablePart("q1", "q1", 1, "Exhibit 2.3.59-17", "LINE POSITION", True)
    assert item_context(None, first) == []


def test_the_contextual_header_of_a_row_names_its_exhibit() -> None:
    quotes, _, paths = _tables_and_sections((50, 53))
    row = next(q for q in quotes if "values 22-33 are entity no-merge" in (q["text"] or ""))
    header = contextual_header("2.3.59 (Rev 12/22)", paths[row["quote_id"]], row["text"])
    assert header == "2.3.59 (Rev 12/22) | Exhibit 2.3.59-14 Command Code BMFOL Entity Display"
    # a heading quote is not prefixed with itself; a paragraph that starts with the heading's words is
    # (cancer-guide.pdf p49: "Aromatase inhibitors help prevent ..." under "Aromatase inhibitors")
    assert contextual_header("T", "A > B > Chapter 2", "Chapter 2") == "T"
    body = "Aromatase inhibitors help prevent the growth of oestrogen-dependent cancer cells"
    assert contextual_header("T", "Hormone therapy > Aromatase inhibitors", body, opens_section=False).endswith(
        "| Hormone therapy > Aromatase inhibitors"
    )
    assert short_path("Codex DAO > MAIN GAME > ITEMS > The Summer Sword") == "MAIN GAME > ITEMS > The Summer Sword"
