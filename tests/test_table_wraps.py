"""A table's label cell wrapped onto a second line, and a column of lengths of time, read as the
page prints them: the rows of a real figure as the describe stage stores them (OCR to Markdown),
asked the dev half's question of it (../shared/benchmarks/mmlongbench-dev, mlb-D-101)."""

from __future__ import annotations

import json

import pytest

from interleaf.evaluate.mmlongbench import score
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.sentences import table_rows
from tests.conftest import CORPUS

BENCH = CORPUS.parent / "benchmarks" / "mmlongbench-dev"

# page 11 of the dev half's graduate-studies brochure: a figure the describe stage read into these
# rows (its table_md, as stored); each programme's name wraps onto a second line of its cell
PROGRAMMES = """| Programme | Full-Time |
|---|---|
| Leaders in | 7 months |
| Education Programme |  |
| Management and Leadership in | 17 weeks |
| Šchools Programme |  |
| Building Educational Bridges: | 2 weeks |
| Innovation for School Leaders |  |
|  | Graduate Studies & Professional Learning 19 |"""


def test_a_wrapped_label_is_one_row_and_lengths_of_time_compare_in_days() -> None:
    rows = table_rows(PROGRAMMES)
    assert [r.cells[0] for r in rows[:3]] == [
        "Leaders in Education Programme",
        "Management and Leadership in Šchools Programme",
        "Building Educational Bridges: Innovation for School Leaders",
    ]
    # 7 months is longer than 17 weeks, though 17 is the larger number
    assert rows[0].value(1) > rows[1].value(1) > rows[2].value(1)
    # a label-only row under a label that is complete is a row of its own (or a group's label)
    assert len(table_rows("| Team | Wins |\n|---|---|\n| North | 4 |\n| South |  |\n| East | 2 |")) == 3


def test_the_longest_programme_is_named_whole() -> None:
    path = BENCH / "qa_dev.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    q = next(json.loads(line) for line in path.read_text().splitlines() if '"mlb-D-101"' in line)
    context = (ContextQuote("f1", "image", 1, "d", q["doc"], 10, "figure", PROGRAMMES),)
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], context)], lambda p: b"")
    assert score(q["answer"], a.short_answer or "", q["answer_format"]) == 1.0, a.markdown
    assert "7 months" in a.markdown, a.markdown
