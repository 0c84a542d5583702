"""What a document's numbered parts are called (part_titles.py), on the dev half's course syllabus
(../shared/benchmarks/mmlongbench-dev): each unit opens with a heading "UNIT 2: <title>", and
lines such as "Unit 2 Key Assignments:" and "Quiz #1: ... from Unit 1 and 2" mention units without
naming them. The answer is checked as the product checks it, and scored by the benchmark's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interleaf.evaluate.mmlongbench import score
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.part_titles import named_parts, part_title, titles_asked
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from tests.support.dev_half import BENCH, dev_pdf

SYLLABUS = "f8d3a162ab9507e021d83dd109118b60.pdf"


@pytest.fixture(scope="module")
def blocks() -> list[dict[str, Any]]:
    """The syllabus's text blocks as quote rows; a block of a few words is a heading ("title")."""
    with dev_pdf(SYLLABUS) as document:
        return [
            {"quote_id": f"p{page.number}b{i}", "page_idx": page.number, "layout_idx": i, "text": b[4].strip()}
            | {"kind": "title" if len(b[4].split()) <= 12 else "text"}
            for page in document
            for i, b in enumerate(page.get_text("blocks"))
        ]


def test_the_parts_a_question_asks_the_names_of() -> None:
    assert titles_asked("What are the titles of chapters 3, 4 and 5?") == ("chapter", ["3", "4", "5"])
    assert titles_asked("What is Module B called?") == ("Module", ["B"])
    assert titles_asked("what is the name of unit-8?") == ("unit", ["8"])
    # a part named by what it holds, or a person's name, is no numbered part (dev-half questions' words)
    assert titles_asked("What is the title of case study given under unit-8 in table?") is None
    assert titles_asked("What is the name of the governor as mentioned on the first page?") is None


def test_a_part_is_named_by_the_line_that_opens_with_its_label(blocks: list[dict[str, Any]]) -> None:
    assert part_title("UNIT 2: Kettle Care", "Unit", "2") == "Kettle Care"
    assert part_title("Unit 2 Key Tasks:", "Unit", "2") is None  # no colon or dash after the label
    assert part_title("Appendix C: Survey Items ..... 14", "Appendix", "C") == "Survey Items"
    found = named_parts(blocks, "Unit", ["1", "2"])
    assert found is not None
    by_id = {r["quote_id"]: r for r in blocks}
    assert [(label, by_id[q]["page_idx"] + 1) for label, q in found] == [("Unit 1", 2), ("Unit 2", 3)], found
    assert named_parts(blocks, "Unit", ["1", "40"]) is None  # a part the document names nowhere


def test_the_names_asked_are_answered_and_backed(blocks: list[dict[str, Any]]) -> None:
    path = BENCH / "qa_dev.jsonl"
    q = next(json.loads(line) for line in path.read_text().splitlines() if '"mlb-D-244"' in line)
    word, labels = titles_asked(q["question"]) or ("", [])
    found = named_parts(blocks, word, labels)
    assert found is not None
    by_id = {r["quote_id"]: r for r in blocks}
    quotes = tuple(
        ContextQuote(i, "text", n, "syllabus", SYLLABUS, by_id[i]["page_idx"], by_id[i]["kind"], by_id[i]["text"])
        for n, (_, i) in enumerate(found, start=1)
    )
    request = AnswerRequest("q", q["question"], quotes, named_parts=found)
    (a,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert a.markdown.startswith("Unit 1 is titled “Understanding Economic Systems and Business” (page 2) [1]. ")
    assert score(q["answer"], a.short_answer or "", q["answer_format"]) == 1.0, a.short_answer
    checked = check_answer(a.markdown, quotes, question=q["question"])
    assert checked.sentences and all(s.supported for s in checked.sentences), checked.sentences
