"""A question's references resolved to sections of the real manuals' section trees (their outlines)."""

from __future__ import annotations

from typing import Any

import pytest

from interleaf.structure.outline import read_outline
from interleaf.structure.references import quoted_phrases, resolve_references
from interleaf.structure.sections import build_sections
from tests.conftest import CORPUS
from tests.support.structure_pages import GAME, IRS, doc_id_of, parse_pages, pdf_bytes


@pytest.fixture(scope="module")
def sections() -> list[dict[str, Any]]:
    """Both manuals' trees, as the `sections` table holds them (quotes of a few pages parsed)."""
    rows = []
    for pdf, pages in ((IRS, (50, 53)), (GAME, (23, 166))):
        quotes, page_rows = parse_pages(pdf, pages)
        rows += build_sections(doc_id_of(pdf), read_outline(pdf_bytes(pdf)), quotes, page_rows, pdf.name)[0]
    return rows


def _resolve(question: str, sections: list[dict[str, Any]], **kw: Any) -> list[tuple[str, str, list[dict[str, Any]]]]:
    by_id = {s["section_id"]: s for s in sections}
    return [(r.text, r.how, [by_id[i] for i in r.section_ids]) for r in resolve_references(question, sections, **kw)]


def test_an_exhibit_number_names_that_exhibit_only(sections: list[dict[str, Any]]) -> None:
    # the IRS outline says "2.3.59-14   Command Code BMFOL Entity Display"; page 50 says "Exhibit 2.3.59-14"
    ((text, how, found),) = _resolve("In IRM 2.3.59 Exhibit 2.3.59-14, what is the TC006 No Merge Code?", sections)
    assert (text, how) == ("Exhibit 2.3.59-14", "label")  # "IRM 2.3.59" holds it, so the broader one goes
    assert [s["number"] for s in found] == ["2.3.59-14"]


def test_a_section_number_and_a_number_that_prefixes_many(sections: list[dict[str, Any]]) -> None:
    ((_, how, found),) = _resolve("What does IRM 2.3.59.6 list?", sections)
    assert how == "label" and [s["title"] for s in found] == ["Command Code BMFOL Full Input Formats"]
    ((_, how, found),) = _resolve("Per IRM 2.3.59, which definer codes are valid?", sections)
    # no section is numbered 2.3.59: it is the manual, the parent of every 2.3.59.x and 2.3.59-x
    assert how == "label-prefix" and len(found) >= 117 + 9  # 117 exhibits, 2.3.59.1 to 2.3.59.9
    assert all(s["number"].startswith(("2.3.59.", "2.3.59-")) for s in found if s["number"])


def test_tables_and_unknown_numbers_name_no_section(sections: list[dict[str, Any]]) -> None:
    assert _resolve("What does Table 2-2 show?", sections) == []
    assert _resolve("What does Exhibit 9.9.99-1 show?", sections) == []


def test_quoted_titles_name_entries_series_and_alternative_names(sections: list[dict[str, Any]]) -> None:
    ((_, how, found),) = _resolve("In the codex entry 'The Summer Sword', who took it?", sections)
    assert how == "title" and [s["page_start"] for s in found] == [22]
    ((_, how, found),) = _resolve("According to 'The Legend of Calenhad', when was he born?", sections)
    assert how == "title-series"
    assert [s["title"] for s in found] == [f"The Legend of Calenhad: Chapter {n}" for n in (1, 2, 3)]
    # the bookmark reads "Miroir de la Mère, Reville's Folly"
    ((_, how, found),) = _resolve("Why was ('Reville's Folly') cut?", sections)
    assert how == "title-part" and found[0]["title"] == "Miroir de la Mère, Reville's Folly"


def test_a_chapter_title_names_its_entries_too(sections: list[dict[str, Any]]) -> None:
    ((_, how, found),) = _resolve("What happens in 'Return to Ostagar'?", sections)
    assert how == "title"
    titles = [s["title"] for s in found]
    assert titles[0] == "RETURN TO OSTAGAR" and "Cailan's Documents - Page 3 of 3" in titles


def test_unquoted_titles_need_two_words_and_the_longest_wins(sections: list[dict[str, Any]]) -> None:
    ((text, _, _),) = _resolve("What did Knight-Commander Meredith do to the viscount?", sections)
    assert text == "knight-commander meredith"
    assert _resolve("What does a bear eat?", sections) == []  # the entry "Bear" is one common word
    ((text, _, found),) = _resolve("How many died in Surviving the Western Approach?", sections)
    assert text == "surviving the western approach" and len(found) == 1  # not also "The Western Approach"


def test_doc_scope_limits_the_sections(sections: list[dict[str, Any]]) -> None:
    game = doc_id_of(GAME)
    assert _resolve("In Exhibit 2.3.59-14, what is code 28?", sections, doc_ids=[game]) == []
    assert _resolve("In Exhibit 2.3.59-14, what is code 28?", sections, doc_ids=[doc_id_of(IRS)])


def test_quoted_phrases_keep_inner_apostrophes() -> None:
    question = "In 'Cailan's Documents' and \u201cThe Bear\u201d, don't the \u2018Reville\u2019s Folly\u2019 ones"
    assert quoted_phrases(question) == ["Cailan's Documents", "The Bear", "Reville\u2019s Folly"]


def test_a_table_label_resolves_to_the_quotes_captioned_with_it() -> None:
    from interleaf.structure.references import item_labels, resolve_items
    from interleaf.text.references import Label
    from tests.support.structure_pages import CORPUS

    quotes, _ = parse_pages(CORPUS / "docs" / "ibm-redpaper-rcac.pdf", (9,))
    labels = item_labels((q["quote_id"], q["kind"], q["caption"], q["text"]) for q in quotes)
    (item,) = resolve_items("How many user actions in Table 2-2 does QIBM_DB_SECADM authorize?", labels)
    assert item.label == Label("table", "2-2") and item.text == "Table 2-2"
    captioned = [q for q in quotes if q["quote_id"] in item.quote_ids]
    # page 9 prints "Table 2-2    Comparison of the different function usage IDs and *JOBCTL authority"
    assert any("Comparison of the different function usage IDs" in (q["caption"] or q["text"]) for q in captioned)
    assert resolve_items("What does Table 7 show?", labels) == []


def test_a_heading_that_repeats_the_document_title_names_the_document() -> None:
    """cancer-guide.pdf's cover heading is its title: "According to Understanding Breast Cancer, ..."
    names the whole guide (corpus scope), and nothing narrower than the question's own document."""
    pdf = CORPUS / "docs" / "cancer-guide.pdf"
    quotes, page_rows = parse_pages(pdf, (1, 49, 50))
    doc_id = doc_id_of(pdf)
    rows, _ = build_sections(doc_id, read_outline(pdf_bytes(pdf)), quotes, page_rows, "Understanding Breast Cancer")
    cover = [s for s in rows if s["level"] > 0 and s["title"] == "Understanding Breast Cancer"]
    assert cover, "the cover heading is a section"
    question = "According to Understanding Breast Cancer, how long is tamoxifen commonly taken?"
    ((text, _, whole),) = _resolve(question, rows)
    assert text == "understanding breast cancer"
    assert {s["section_id"] for s in whole} == {s["section_id"] for s in rows}  # the root's own quotes too
    assert _resolve(question, rows, doc_ids=[doc_id]) == []
    # beside a section of the document, the narrower scope is the one kept (`most_specific`); a
    # two-word heading counts only quoted (MIN_UNQUOTED_TITLE_WORDS)
    assert _resolve(question + " And aromatase inhibitors?", rows)[0][0] == "understanding breast cancer"
    both = _resolve(question + " And 'Aromatase inhibitors'?", rows)
    assert [(text, [s["title"] for s in found]) for text, _, found in both] == [
        ("aromatase inhibitors", ["Aromatase inhibitors"])
    ]
