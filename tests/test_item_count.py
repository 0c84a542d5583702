"""A question counting its document's tables or figures (interleaf/generate/item_count.py) is
answered from every caption of the document, not from the retrieved context: on the DPR and MAVIS
papers of the corpus, through `ask`, against the labels their text layers print."""

from __future__ import annotations

import json
import re

import pymupdf
import pytest

from interleaf.generate.item_count import CountAsked, count_asked, numbered_items
from tests.conftest import CORPUS, IngestedWarehouse, run_cli, sql_rows


def printed_labels(name: str, word: str) -> set[str]:
    """The numbers of the captions the PDF's text layer prints: a line opening "Table 3:", "Table 3."
    or "Table 2-1   FUNCTION_USAGE view" (never "Table 2-2 shows ...")."""
    with pymupdf.open(CORPUS / "docs" / name) as doc:
        lines = [line for page in doc for line in page.get_text().split("\n")]
    return {m.group(1) for line in lines if (m := re.match(rf"^\s*{word}\s+(\d+(?:-\d+)?)(?:\s*[:.]|\s{{2,}})", line))}


def test_the_forms_of_a_count_over_the_whole_document() -> None:
    assert count_asked("how many tables are included in the document?") == CountAsked("table", "document")
    assert count_asked("How many figures does the paper have?") == CountAsked("figure", "paper")
    assert count_asked("How many tables are there? Answer with an integer.") == CountAsked("table", None)
    # a condition, a kind of figure no caption label names, or a part of the document: ranked instead
    assert count_asked('How many tables report results on "NQ" and its test set?') is None
    # a term the question quotes, which each item counted prints
    assert count_asked('How many tables include "F1" as a metric?') == CountAsked("table", None, "F1")
    assert count_asked('How many figures in the paper show "BLEU"?') == CountAsked("figure", "paper", "BLEU")
    assert count_asked("How many pie charts are there in the paper?") is None
    # the appendix, a part the count can find (from the heading that opens it to the end)
    assert count_asked("How many figures are there in the Appendix in the paper?") == CountAsked("figure", "Appendix")


def test_a_count_over_a_part_of_the_document_is_left_to_the_ranked_answer(corpus_warehouse: IngestedWarehouse) -> None:
    """The DPR paper's stored quotes: counted whole, its seven tables; asked of a part (a part word,
    or the first word of one of its headings), no count of the whole document."""
    rows = sql_rows(
        corpus_warehouse.root,
        "SELECT q.quote_id, q.page_idx, q.layout_idx, q.kind, q.text, q.caption FROM quotes q "
        "JOIN documents d USING (doc_id) WHERE d.name = 'dpr-emnlp2020.pdf'",
    )
    whole = numbered_items(rows, CountAsked("table", "paper"))
    assert whole is not None and len(whole) == len(printed_labels("dpr-emnlp2020.pdf", "Table"))
    assert any(r["kind"] == "title" and r["text"].split()[-1] == "Introduction" for r in rows)
    assert numbered_items(rows, CountAsked("table", "introduction")) is None
    assert numbered_items(rows, CountAsked("table", "section")) is None


def captions_after_the_references(name: str, word: str) -> list[str]:
    """The numbers of the captions a paper's text layer first prints on a page after the one its
    "References" heading opens: its appendix, which a paper prints after its references."""
    first: dict[str, int] = {}
    references = None
    with pymupdf.open(CORPUS / "docs" / name) as doc:
        for i, page in enumerate(doc):
            for line in page.get_text().split("\n"):
                references = i if references is None and line.strip() == "References" else references
                if m := re.match(rf"^\s*{word}\s+(\d+)\s*:", line):
                    first.setdefault(m.group(1), i)
    assert references is not None
    return sorted((n for n, page in first.items() if page > references), key=int)


@pytest.mark.parametrize(
    ("name", "family"),
    [("dpr-emnlp2020.pdf", "table"), ("mavis-aaai2026.pdf", "table"), ("mavis-aaai2026.pdf", "figure")],
)
def test_a_count_in_the_appendix_is_the_items_captioned_there(
    corpus_warehouse: IngestedWarehouse, name: str, family: str
) -> None:
    """The appendix opens at its first lettered section ("A ...", with a "B ..." after it) where no
    heading names it; a table of the body a sentence there names ("Table 3. This is due ...") is
    not one of its items."""
    rows = sql_rows(
        corpus_warehouse.root,
        "SELECT q.quote_id, q.page_idx, q.layout_idx, q.kind, q.text, q.caption FROM quotes q "
        f"JOIN documents d USING (doc_id) WHERE d.name = '{name}'",
    )
    expected = captions_after_the_references(name, family.capitalize())
    assert len(expected) >= 3
    counted = numbered_items(rows, CountAsked(family, "appendix"))
    assert counted is not None and sorted((label.number for label, _ in counted), key=int) == expected


@pytest.mark.parametrize(
    ("name", "question", "word"),
    [
        ("dpr-emnlp2020.pdf", "How many tables are in the paper?", "Table"),
        ("mavis-aaai2026.pdf", "How many tables are there in the paper?", "Table"),
        ("mavis-aaai2026.pdf", "How many figures does the paper have?", "Figure"),
        ("cyber-leadership-brief.pdf", "How many figures are in the brief?", "Figure"),  # one in a paragraph
        ("ibm-redpaper-rcac.pdf", "How many tables does the document have?", "Table"),  # "Table 2-1", "Table 3-2"
    ],
)
def test_a_count_of_the_documents_tables_is_every_caption_it_prints(
    corpus_warehouse: IngestedWarehouse, name: str, question: str, word: str
) -> None:
    printed = printed_labels(name, word)
    assert len(printed) >= 2
    shown = json.loads(run_cli(corpus_warehouse.root, "ask", question, "--doc", name, "--json").stdout)
    assert shown["short_answer"] == str(len(printed)), shown
    assert f"numbers {len(printed)} {word.lower()}s" in shown["answer"], shown["answer"]
    last = max(printed, key=lambda n: [int(p) for p in n.split("-")])
    assert f"{word} {last} (page" in shown["answer"]  # the items are named, the last one cited
    assert shown["sources"] and all(s["document"] == name for s in shown["sources"]), shown["sources"]
    # the count is in plain sight as the last label: no value the citation check finds unheld
    assert all(s["supported"] for s in shown["sentences"]), shown["sentences"]


def test_a_count_with_a_condition_is_not_the_documents_total(corpus_warehouse: IngestedWarehouse) -> None:
    question = "How many tables report results on Natural Questions?"
    shown = json.loads(run_cli(corpus_warehouse.root, "ask", question, "--doc", "dpr-emnlp2020.pdf", "--json").stdout)
    assert "The document numbers" not in shown["answer"], shown["answer"]


@pytest.mark.parametrize("term", ["NQ", "Top-20"])
def test_a_count_of_the_tables_printing_a_quoted_term(corpus_warehouse: IngestedWarehouse, term: str) -> None:
    """'How many tables include "NQ"?' of the DPR paper: the tables whose own text prints the term,
    each named (Table 1 spells the dataset out, "Natural Questions": not counted for "NQ"), every
    table counted printing it on its page of the PDF, none left out that prints it in the stored text."""
    question = f'How many tables include "{term}"?'
    shown = json.loads(run_cli(corpus_warehouse.root, "ask", question, "--doc", "dpr-emnlp2020.pdf", "--json").stdout)
    counted = re.findall(r"Table (\d+) \(page (\d+)\)", shown["answer"])
    assert counted and shown["short_answer"] == str(len(counted)), shown
    assert f"{len(counted)} tables of the document print “{term}”" in shown["answer"], shown["answer"]
    assert all(s["supported"] for s in shown["sentences"]), shown["sentences"]
    printing = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)")
    tables = sql_rows(
        corpus_warehouse.root,
        "SELECT q.page_idx, q.caption, q.text FROM quotes q JOIN documents d USING (doc_id) "
        "WHERE d.name = 'dpr-emnlp2020.pdf' AND q.kind = 'table'",
    )
    holding = {
        (m.group(1), str(t["page_idx"] + 1))
        for t in tables
        if printing.search(f"{t['caption'] or ''} {t['text'] or ''}")
        and (m := re.match(r"Table (\d+)", t["caption"] or ""))
    }
    assert set(counted) == holding, (counted, holding)
    with pymupdf.open(CORPUS / "docs" / "dpr-emnlp2020.pdf") as doc:
        assert all(printing.search(doc[int(page) - 1].get_text()) for _, page in counted)
    if term == "NQ":
        assert ("1", "4") not in set(counted)  # "Natural Questions" in full
