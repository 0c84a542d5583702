"""The offline grounding figures: the citation checker's verdicts aggregated, short-answer number
recall; expected values worked by hand."""

from __future__ import annotations

import pytest

from interleaf.evaluate.metrics import ByModality, QuestionRecord, aggregate, score_questions
from interleaf.evaluate.metrics.grounding import short_answer_number_recall
from tests.support.metrics_records import quote, record


def test_short_answer_number_recall() -> None:
    # gold numbers 1234, 2023, 8.4; the answer states 1234 (as "1,234"), 8.4 (as "8.40%"), not 2023
    assert short_answer_number_recall("1234 million in 2023; 8.4%", "It was 1,234 million, 8.40% [2023].") == 2 / 3
    assert short_answer_number_recall("Paris", "1 2 3") is None  # no numbers in the gold: no value
    # citation markers are not numbers the answer states
    assert short_answer_number_recall("3", "See [3] and ![chart](image3).") == 0.0


def test_checker_verdicts_and_numbers_aggregate() -> None:
    context = [
        quote("t1", "text", 1, "Revenue was 1,234 million in 2023."),
        quote("t2", "text", 2, "Margin rose to 8.4% in 2023."),
    ]
    answer = "Revenue was 1234 million in 2023 [1]. Margin rose to 8.40% [1]. Costs were 77 million."
    checked = record("q1", context, answer, short_answer="1,234 million; margin 8.4% in 2023")
    # sentence 1 cites t1 and its numbers 1234 and 2023 are in t1: supported, 2 numbers grounded;
    # sentence 2 cites t1, which lacks 8.4: not supported, 0 of 1 grounded; sentence 3 cites nothing: 77 not grounded
    others = [  # not checked: count only for short-answer recall
        QuestionRecord("q2", "q?", ByModality(), ByModality(), (), "Costs were 77 million.", short_answer="77.5 or 12"),
        QuestionRecord("q3", "q?", ByModality(), ByModality(), (), "In Paris.", short_answer="Paris"),
    ]
    got = {m.name: m for m in aggregate(score_questions([checked, *others]), judged=False)}
    assert (got["sentences_cited"].value, got["sentences_cited"].n) == (pytest.approx(2 / 3), 3)
    assert (got["sentences_supported"].value, got["sentences_supported"].n) == (0.5, 2)
    # 2 grounded of 4 numbers (1234, 2023, 8.4, 77; the [1] markers are not numbers)
    assert (got["numbers_grounded"].value, got["numbers_grounded"].n) == (0.5, 4)
    # q1: 1234, 8.4, 2023 all stated: 1; q2: 77.5 and 12 not stated: 0; q3 has no numbers: left out -> 0.5
    assert (got["short_answer_number_recall"].value, got["short_answer_number_recall"].n) == (0.5, 2)
