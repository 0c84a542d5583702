"""Is the answer right, as a reader checks it: `must_include` folded, abstention recall, false
abstention, words and the relevance share, on qa_dev_answers.jsonl's own questions (each answer
here is written by hand the way a generator writes them, citations included)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from interleaf.evaluate.metrics import ByModality, QuestionRecord, aggregate, score_questions
from interleaf.evaluate.metrics.correctness import answer_correct, fold
from interleaf.questions.stage import read_question_file


@pytest.fixture(scope="module")
def gold(corpus: Path) -> dict[str, dict]:
    return {q["id"]: q for q in map(json.loads, (corpus / "qa_dev_answers.jsonl").read_text().splitlines())}


def test_folding_matches_what_the_pdf_prints_in_the_forms_answers_write(gold: dict[str, dict]) -> None:
    # a006: the Ecorr sign; the text layer stores it as U+0003, an answer may write U+2212
    assert gold["a006"]["must_include"] == ["-0.5896"]
    assert answer_correct("Ecorr is \u22120.5896 V with 8 g of inhibitor [3].", gold["a006"]["must_include"])
    assert not answer_correct("Ecorr is 0.5896 V with 8 g of inhibitor [3].", gold["a006"]["must_include"])
    # a024: the Indian grouping the report prints, written without separators or grouped by thousands
    must = gold["a024"]["must_include"]
    assert answer_correct("Revenue was ₹792756 crore and net profit ₹67,845 crore [2].", must)
    assert answer_correct("Revenue was ₹ 7,92,756 crore; net profit ₹ 67845 crore.", must)
    assert not answer_correct("Revenue was ₹792756 crore [2].", must)  # the second figure is missing
    # case and white space; a citation marker between the words does not break the match
    assert answer_correct(
        "It is an  ENFORCED FOR ALL\nACCESS clause covering all references [4].", gold["a014"]["must_include"]
    )
    assert answer_correct("Volume 21 [1], Number 8 [1], August 1978.", gold["a019"]["must_include"])
    assert fold("94.1 [3][7] and ![Table 2](image1)") == "94.1 and"


def test_a_gold_value_counts_only_whole(corpus: Path) -> None:
    # MMLongBench-Doc's dev half: one-digit counts, and a percentage, as its people wrote them
    bench = corpus.parent / "benchmarks" / "mmlongbench-dev" / "qa_dev.jsonl"
    gold = {q["id"]: q for q in map(json.loads, bench.read_text().splitlines())}
    assert gold["mlb-D-010"]["must_include"] == ["3"]
    must = gold["mlb-D-010"]["must_include"]
    assert not answer_correct("Table 5 (page 7) gives F1. 39.4 for 0 (gold) [2].", must)  # a digit of another number
    assert not answer_correct("It was filed May 18, 2003.", must)
    assert answer_correct("Three of them: the counts are 3 [1].", must)
    assert answer_correct("3.", must) and answer_correct("(3)", must) and answer_correct("three (3) sets", must)
    assert gold["mlb-D-122"]["must_include"] == ["1%"]
    assert not answer_correct("just 71% of adults [1]", gold["mlb-D-122"]["must_include"])
    assert answer_correct("a gap of 1% [1]", gold["mlb-D-122"]["must_include"])
    assert not answer_correct("a gap of 1.5% [1]", gold["mlb-D-122"]["must_include"])
    # a gold sentence, its stop after the citation the answer writes before it
    sentence = gold["mlb-D-004"]["must_include"]
    assert sentence[0].endswith("orderly."), sentence
    assert answer_correct(f"{sentence[0][:-1]} [5]. This law implies more [5].", sentence)
    assert not answer_correct(f"{sentence[0][:-9]} [5].", sentence)
    # ... and quoted inside a sentence of the answer's own, its stop left to that sentence
    assert answer_correct(f"The text says {sentence[0][:-1]}, in those words [5].", sentence)
    assert not answer_correct(f"The text says {sentence[0][:-1]}ly, in those words [5].", sentence)


def _record(q: dict, answer: str, *, abstained: bool = False, words: int = 12, relevant: bool = True) -> QuestionRecord:
    return QuestionRecord(
        question_id=q["id"],
        question=q["question"],
        gold=ByModality(),
        cited=ByModality(),
        context=(),
        answer_markdown=answer,
        question_type=q["question_type"],
        must_include=tuple(q["must_include"]),
        answerable=q["answerable"],
        abstained=abstained,
        addresses_question=relevant,
        words=words,
    )


def _metrics(records: list[QuestionRecord]) -> dict[str, tuple[float | None, int]]:
    return {m.name: (m.value, m.n) for m in aggregate(score_questions(records), judged=False)}


def test_abstention_is_scored_against_the_gold_answerability(gold: dict[str, dict]) -> None:
    records = [
        _record(
            gold["a001"], "The multi-dataset BM25 + DPR retriever reaches 94.1 Top-100 accuracy on TREC [2].", words=14
        ),
        _record(gold["a002"], "L2 with triplet loss reaches 42.2 [5].", words=8),
        # an abstention on an answerable question: wrong, and a false abstention, even if it holds the value
        _record(
            gold["a003"], "The documents do not say (0.6977 is the NDCG of another run).", abstained=True, words=11
        ),
        _record(gold["a027"], "The documents do not say: DPR is not evaluated on MS MARCO.", abstained=True, words=11),
        _record(gold["a028"], "LLaVa-OneVision reaches 0.31 MAUVE [4].", words=6, relevant=False),
    ]
    m = _metrics(records)
    assert m["answer_correct"] == (pytest.approx(2 / 3), 3)  # a001, a002 right; a003 abstained
    assert m["abstention_recall"] == (0.5, 2)  # a027 abstained, a028 answered
    assert m["false_abstention"] == (pytest.approx(1 / 3), 3)
    assert m["median_words"] == (11, 5)
    assert m["answers_addressing_question"] == (0.8, 5)


def test_questions_without_answer_gold_are_not_computed_never_zero(gold: dict[str, dict]) -> None:
    # qa_dev.jsonl and MMDocRAG lines carry no must_include / answerable: no value, and said so
    record = replace(_record(gold["a001"], "94.1 [1]."), must_include=None, answerable=None)
    m = _metrics([record])
    assert m["answer_correct"] == (None, 0) and m["abstention_recall"] == (None, 0)
    assert m["false_abstention"] == (None, 0)
    assert m["median_words"] == (12, 1)


def test_the_question_file_carries_the_answer_gold(corpus: Path, tmp_path: Path) -> None:
    qset = read_question_file(corpus / "qa_dev_answers.jsonl")
    rows = {r["question_id"]: r for r in qset.rows}
    assert rows["a009"]["must_include"] == ["2.8163", "0.0919"] and rows["a009"]["answerable"] is True
    assert rows["a031"]["answerable"] is False and rows["a031"]["must_include"] == []
    assert rows["a022"]["cross_page"] is True
    # qa_dev.jsonl gives neither must_include nor answerable: null, not false
    plain = read_question_file(corpus / "qa_dev.jsonl").rows[0]
    assert (plain["must_include"], plain["answerable"]) == (None, None)
    # a mistyped field is a reject naming the line; the other lines are read
    lines = (corpus / "qa_dev_answers.jsonl").read_text().splitlines()[:3]
    bad = json.loads(lines[1]) | {"must_include": "42.2"}
    worse = json.loads(lines[2]) | {"answerable": "yes"}
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(bad), json.dumps(worse)]) + "\n")
    mixed = read_question_file(path)
    assert [r["question_id"] for r in mixed.rows] == ["a001"]
    assert [reason for _, reason in mixed.rejects] == [
        "mixed.jsonl line 2: `must_include` must be a list of non-empty strings",
        "mixed.jsonl line 3: `answerable` must be true or false, not 'yes'",
    ]
