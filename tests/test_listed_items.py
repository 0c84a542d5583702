"""Counting the items a document lists under one name (listed_items.py), on the dev half's course
syllabus (../shared/benchmarks/mmlongbench-dev): its units list their case studies ("• Critical
Thinking Case Study-- <title>:"), and a summary on its last pages lists them again, some cut short.
The answer is checked as the product checks it, and scored by the benchmark's rules."""

from __future__ import annotations

from typing import Any

import pytest

from interleaf.evaluate.mmlongbench import score
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.listed_items import items_asked, listed_items
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from tests.support.dev_half import dev_pdf, dev_question

SYLLABUS = "f8d3a162ab9507e021d83dd109118b60.pdf"


@pytest.fixture(scope="module")
def lines() -> list[dict[str, Any]]:
    """The syllabus's text lines as quote rows, each line its own quote."""
    with dev_pdf(SYLLABUS) as document:
        return [
            {"quote_id": f"p{page.number}l{i}", "page_idx": page.number, "layout_idx": i, "kind": "text", "text": t}
            for page in document
            for i, t in enumerate(line.strip() for line in page.get_text().splitlines())
            if t
        ]


def test_what_a_question_counts_over_its_whole_document() -> None:
    assert items_asked("How many field trips are there?") == ["field trip"]
    assert items_asked("How many quizzes are there in the entire course?")[0] == "quiz"  # type: ignore[index]
    # a count over a part of the document, or of tables or appendices (counted elsewhere), is not one
    assert items_asked("How many quizzes are there in units 4, 5, and 6 combined?") is None  # mlb-D-125's
    assert items_asked("How many tables are included in the document?") is None
    assert items_asked("How many appendices appear in the document?") is None


def test_each_case_study_is_counted_once(lines: list[dict[str, Any]]) -> None:
    found = listed_items(lines, ["critical thinking case study"])
    titles = [title for title, _ in found]
    assert len(titles) == 3, titles
    assert [t.split()[0] for t in titles] == ["UBER", "We", "Discrimination"], titles
    assert listed_items(lines, ["kettle"]) == ()  # a name the document lists nothing under


def test_the_count_is_answered_and_backed(lines: list[dict[str, Any]]) -> None:
    q = dev_question("mlb-D-246")
    found = listed_items(lines, items_asked(q["question"]) or [])
    by_id = {r["quote_id"]: r for r in lines}
    quotes = tuple(
        ContextQuote(i, "text", n, "syllabus", SYLLABUS, by_id[i]["page_idx"], "text", by_id[i]["text"])
        for n, (_, i) in enumerate(found, start=1)
    )
    (a,) = OfflineGenerator(OfflineConfig()).generate(
        [AnswerRequest("q", q["question"], quotes, listed=found)], lambda p: b""
    )
    assert a.markdown.startswith("3 critical thinking case studies are listed: “UBER Hits a Bumpy Road"), a.markdown
    assert score(q["answer"], a.short_answer or "", q["answer_format"]) == 1.0, a.short_answer
    checked = check_answer(a.markdown, quotes, question=q["question"])
    assert checked.sentences and all(s.supported for s in checked.sentences), checked.sentences
