"""Counting a document's lettered parts (part_count.py) on the dev half's state health plan: its
contents page lists Appendix A to E, each appendix opens with its own heading, and a sentence
mentions one ("... (see Appendix E). Results ...") without opening a line with it. The answer is
checked as the product checks it: the count is backed by the labels it lists and the contents
quote that lists them."""

from __future__ import annotations

from typing import Any

import pymupdf
import pytest

from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.part_count import numbered_parts, parts_asked
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from tests.support.dev_half import BENCH, dev_pdf

PLAN = "e79deb02a0c0e87511080836c5d4347b.pdf"


@pytest.fixture(scope="module")
def blocks() -> list[dict[str, Any]]:
    """The plan's text blocks as quote rows; a block of a few words is a heading ("title")."""
    rows = []
    with dev_pdf(PLAN) as document:
        for page in document:
            for i, b in enumerate(page.get_text("blocks")):
                text = b[4].strip()
                heading = len(text.split()) <= 6
                rows.append(
                    {"quote_id": f"p{page.number}b{i}", "page_idx": page.number, "layout_idx": i, "text": text}
                    | {"kind": "title" if heading else "text"}
                )
    return rows


def test_parts_are_counted_by_the_labels_lines_open_with(blocks: list[dict[str, Any]]) -> None:
    assert parts_asked("How many appendices appear in the document?") == "Appendix"  # mlb-D-141's
    assert parts_asked("How many chapters does the guide have?") == "Chapter"
    assert parts_asked("How many figures are in the appendix?") is None  # a part's contents: not counted here
    found = numbered_parts(blocks, "Appendix")
    labels = [label for label, _ in found if label]
    assert labels == [f"Appendix {c}" for c in "ABCDE"], found
    by_id = {r["quote_id"]: r for r in blocks}
    # each appendix cited at its own heading (not on the contents page, page 3); the contents listed last
    assert all(by_id[q]["kind"] == "title" and by_id[q]["page_idx"] > 2 for label, q in found if label), found
    contents = [q for label, q in found if not label]
    assert len(contents) == 1 and by_id[contents[0]]["page_idx"] == 2, found
    assert numbered_parts(blocks, "Chapter") == []  # a document that labels no chapter


def test_the_count_of_appendices_is_answered_and_backed(blocks: list[dict[str, Any]]) -> None:
    question = "How many appendices appear in the document?"
    found = numbered_parts(blocks, "Appendix")
    by_id = {r["quote_id"]: r for r in blocks}
    ids = list(dict.fromkeys(q for _, q in found))
    quotes = tuple(
        ContextQuote(q, "text", n, "plan", PLAN, by_id[q]["page_idx"], by_id[q]["kind"], by_id[q]["text"])
        for n, q in enumerate(ids, start=1)
    )
    request = AnswerRequest("q", question, quotes, counted=tuple(found))
    (a,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert a.error is None
    assert a.markdown.startswith("The document numbers 5 appendices [6]: Appendix A (page 7) [1]"), a.markdown
    assert a.short_answer == "5"
    checked = check_answer(a.markdown, quotes, question=question)
    assert checked.sentences and all(s.supported for s in checked.sentences), checked.sentences


def test_parts_are_listed_in_their_numbering_order() -> None:
    # the corpus redpaper's chapters, each page read bottom-up (the parser read its
    # contents page out of order): the answer lists them as the document numbers them
    path = BENCH.parent.parent / "corpus" / "docs" / "ibm-redpaper-rcac.pdf"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    with pymupdf.open(path) as document:
        rows = [
            {"quote_id": f"p{p.number}b{i}", "page_idx": p.number, "layout_idx": -i, "kind": "text", "text": b[4]}
            for p in document
            for i, b in enumerate(p.get_text("blocks"))
        ]
    labels = [label for label, _ in numbered_parts(rows, "Chapter") if label]
    assert labels == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"], labels
