"""Quote selection as MMDocRAG computes it (§4.1, eval_all.py); expected values worked by hand."""

from __future__ import annotations

import pytest

from interleaf.evaluate.metrics import ByModality, QuestionRecord, aggregate, cited_from_answer, score_questions
from interleaf.evaluate.metrics.records import invalid_citation_id
from interleaf.evaluate.metrics.selection import prf
from tests.support.metrics_records import quote


def bare(question_id: str, gold: ByModality, cited: ByModality) -> QuestionRecord:
    return QuestionRecord(question_id, "q?", gold, cited, (), "an answer")


def by_name(records: list[QuestionRecord]) -> dict[str, float | None]:
    return {m.name: m.value for m in aggregate(score_questions(records), judged=False)}


def test_prf_zero_denominators_score_zero_as_the_reference() -> None:
    assert prf({"a"}, set()) == prf(set(), {"a"}) == prf(set(), set())
    assert prf(set(), set()).f1 == 0.0
    # gold {a, b}, cited {a}: P = 1/1, R = 1/2, F1 = 2 * 1 * 0.5 / 1.5 = 2/3
    assert prf({"a", "b"}, ["a", "a"]).f1 == pytest.approx(2 / 3)


def test_overall_f1_is_per_question_and_modality_scores_are_micro() -> None:
    records = [
        # Q1: gold {t1, t2, i1}, cited {t1, t3, i1}: tp 2, P 2/3, R 2/3, F1 2/3
        bare("q1", ByModality(("t1", "t2"), ("i1",)), ByModality(("t1", "t3"), ("i1",))),
        # Q2: gold {t4, i2, i3}, cited {i2}: tp 1, P 1, R 1/3, F1 = 2 * (1/3) / (4/3) = 1/2
        bare("q2", ByModality(("t4",), ("i2", "i3")), ByModality((), ("i2",))),
        # Q3: no gold, cited {t5}: P = R = F1 = 0 (the reference's zero-denominator rule), still counted
        bare("q3", ByModality(), ByModality(("t5",), ())),
    ]
    got = by_name(records)
    # overall F1 = (2/3 + 1/2 + 0) / 3 = 7/18
    assert got["quote_f1"] == pytest.approx(7 / 18)
    # overall P = (2/3 + 1 + 0) / 3 = 5/9; R = (2/3 + 1/3 + 0) / 3 = 1/3
    assert got["quote_precision"] == pytest.approx(5 / 9)
    assert got["quote_recall"] == pytest.approx(1 / 3)
    # text, pooled: tp 1 (q1 t1), cited 3 (t1, t3, t5), gold 3 (t1, t2, t4): P = R = F1 = 1/3
    assert (got["text_quote_precision"], got["text_quote_recall"]) == pytest.approx((1 / 3, 1 / 3))
    assert got["text_quote_f1"] == pytest.approx(1 / 3)
    # image, pooled: tp 2 (i1, i2), cited 2, gold 3 (i1, i2, i3): P 1, R 2/3, F1 = (4/3) / (5/3) = 0.8
    assert (got["image_quote_precision"], got["image_quote_recall"]) == pytest.approx((1.0, 2 / 3))
    assert got["image_quote_f1"] == pytest.approx(0.8)
    # the headline is not the mean of the modality F1s: (1/3 + 0.8) / 2 = 0.5667
    assert got["quote_f1"] != pytest.approx((got["text_quote_f1"] + got["image_quote_f1"]) / 2)
    # answers citing an image: q1, q2 of 3; citing a text: q1, q3 of 3
    assert got["answers_citing_image"] == pytest.approx(2 / 3)
    assert got["answers_citing_text"] == pytest.approx(2 / 3)


def test_edge_cases_are_counted_in_the_note() -> None:
    records = [bare("q1", ByModality(), ByModality()), bare("q2", ByModality(("t1",)), ByModality())]
    (f1,) = [m for m in aggregate(score_questions(records), judged=False) if m.name == "quote_f1"]
    assert (f1.value, f1.n) == (0.0, 2)
    assert "1 without gold and 2 citing nothing score 0" in f1.note


def test_citations_are_read_from_the_answer_as_written() -> None:
    context = (
        quote("t-a", "text", 1, "alpha"),
        quote("t-b", "text", 2, "beta"),
        quote("t-c", "text", 3, "gamma"),
        quote("i-a", "image", 1, "chart"),
        quote("i-b", "image", 2, "table"),
    )
    answer = "Revenue grew [1][3]. ![Chart of revenue](image2) shows it [9]. See image 1 and [1]."
    cited = cited_from_answer(answer, context)
    # [9] is outside the context: kept as a false positive, as MMDocRAG's regex counts it
    assert cited.text == ("t-a", "t-c", invalid_citation_id("text", 9))
    # "image 1" is repaired to ![](image1) and counts; as eval_all.py reads it only the canonical image2 counts
    assert cited.image == ("i-b", "i-a")
    assert cited_from_answer(answer, context, "mmdocrag").image == ("i-b",)
    # gold {t-a, i-a}: cited 5 ids (3 text + 2 image), tp 2 -> P 2/5, R 1, F1 = 2 * 0.4 / 1.4 = 4/7
    record = QuestionRecord("q", "q?", ByModality(("t-a",), ("i-a",)), cited, context, answer)
    assert by_name([record])["quote_f1"] == pytest.approx(4 / 7)
