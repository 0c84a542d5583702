"""Answers a user can trust, end to end on the corpus warehouse (docs/ and bad/ ingested once per
session, tests/conftest.py): the offline composer says "the documents do not say" for an entity the
corpus does not hold and for a near miss, answers a table cell in one sentence with its labels, a
figure from what it says with the figure beside it, and each part of a two-part question."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from interleaf.generate.abstain import NOT_IN_DOCUMENTS
from interleaf.generate.sentences import split_sentences, strip_marks
from tests.conftest import IngestedWarehouse, run_cli, sql_rows

TESLA = "What was Tesla's closing stock price on 3 January 2022?"
# qa_dev_answers.jsonl questions, by id: a near miss (Table 1 has 0-10 g), a table cell, a figure
FROM_DEV_SET = ("a029", "a006", "a016")
OWN = [
    # one part the DPR paper answers (995.0 questions per second), one it does not (no MS MARCO)
    {
        "id": "two-parts",
        "doc": "dpr-emnlp2020.pdf",
        "question": "How many questions per second can DPR process, and what Top-20 accuracy does DPR reach "
        "on MS MARCO?",
    },
    # the issue's own example: the row-group label "Multi" stands for "trained on multiple datasets"
    {
        "id": "multi",
        "doc": "dpr-emnlp2020",
        "question": "What Top-100 retrieval accuracy does DPR trained on multiple datasets reach on TREC?",
    },
    # a figure answered from its caption, placed beside it (MAVIS Figure 3 on page 7)
    {"id": "caption", "doc": "mavis-aaai2026.pdf", "question": "What does Figure 3 of the MAVIS paper show?"},
]


def _answers(root: Path, result_stdout: str) -> dict[str, dict]:
    qset = re.search(r"question set (\w+)", result_stdout).group(1)
    rows = sql_rows(
        root,
        "select question_id, answer_md, answerable, abstain_reason, addresses_question, relevance_reason "
        f"from answers where qset_id = '{qset}'",
    )
    return {r["question_id"]: r for r in rows}


@pytest.fixture(scope="module")
def answered(corpus_warehouse: IngestedWarehouse, corpus: Path) -> dict[str, dict]:
    root = corpus_warehouse.root
    dev = {q["id"]: q for q in map(json.loads, (corpus / "qa_dev_answers.jsonl").read_text().splitlines())}
    doc_questions = root.parent / "abstain-doc.jsonl"
    doc_questions.write_text("".join(json.dumps(q) + "\n" for q in [*(dev[i] for i in FROM_DEV_SET), *OWN]))
    out = _answers(root, run_cli(root, "answer", "--qa", str(doc_questions), "--scope", "doc").stdout)
    corpus_questions = root.parent / "abstain-corpus.jsonl"
    corpus_questions.write_text(json.dumps({"id": "tesla", "doc": None, "question": TESLA}) + "\n")
    return out | _answers(root, run_cli(root, "answer", "--qa", str(corpus_questions), "--scope", "corpus").stdout)


def test_an_entity_the_corpus_does_not_hold_is_said_missing(answered: dict[str, dict]) -> None:
    row = answered["tesla"]
    # no quote of the corpus mentions Tesla: the composer abstains (its fitted threshold's call), or
    # what it writes is flagged as not answering, naming what no quote mentions
    if row["answerable"]:
        assert row["addresses_question"] is False and "Tesla" in row["relevance_reason"], row
    else:
        assert "Tesla" in row["abstain_reason"] and row["answer_md"].startswith(NOT_IN_DOCUMENTS), row
        assert row["addresses_question"] is True and row["relevance_reason"] == "said missing"
    # before: "A total of 3 trucks were used for 15 hours [1]" from bad/fake-memo-with-duplicate-page.pdf,
    # a number passed off as the price
    assert "trucks" not in row["answer_md"], row


def test_a_near_miss_is_said_missing_or_flagged(answered: dict[str, dict]) -> None:
    # Table 1 of the corrosion data has 0, 2, 4, 6, 8 and 10 g: no 12 g row. Whether the composer
    # abstains is its fitted threshold's call; what it writes never passes for an answer
    row = answered["a029"]
    if row["answerable"]:
        assert row["addresses_question"] is False and "12" in row["relevance_reason"], row
    else:
        assert "12" in row["abstain_reason"] and row["answer_md"].startswith(NOT_IN_DOCUMENTS), row
    assert not any(v in row["answer_md"] for v in ("0.0919", "2.8163", "0.0763")), row  # no row's rate as 12 g's


def test_a_table_cell_is_one_sentence_with_its_labels(answered: dict[str, dict]) -> None:
    row = answered["a006"]  # Ecorr for 8 g of egg shell: -0.5896 V
    answer = row["answer_md"]
    assert row["answerable"] is True and len(split_sentences(answer)) == 1, answer
    claim = strip_marks(answer)
    assert "0.5896" in claim and "Ecorr" in claim and " 8" in claim and "Table 1" in claim
    # the cell, not the table: no other row's value
    assert not any(v in claim for v in ("0.9393", "0.8276", "0.5356", "2.8163")), claim
    assert re.search(r"!\[[^\]]*\]\(image\d+\)$", answer)  # the table placed right after its sentence
    assert len(answer.split()) <= 40


def test_a_shortened_row_label_is_matched(answered: dict[str, dict]) -> None:
    claim = strip_marks(answered["multi"]["answer_md"])  # DPR Table 2: Multi / DPR, Top-100 TREC = 93.9
    assert "93.9" in claim and "Multi" in claim, claim
    assert "89.1" not in claim  # the Single row's value, which it gave before


def test_a_figure_is_answered_from_what_it_says_beside_it(answered: dict[str, dict]) -> None:
    answer = answered["a016"]["answer_md"]  # the 'How cancer spreads' diagram, page 7
    first = split_sentences(answer)[0]
    assert "blood vessels and lymph vessels" in first and re.search(r"\]\(image\d+\)", first), answer
    # its labels ("Primary cancer", "Local invasion") are not strung together as the answer
    assert "Local invasion" not in answer and "Primary cancer" not in answer


def test_a_figure_is_answered_from_its_caption(answered: dict[str, dict]) -> None:
    answer = answered["caption"]["answer_md"]
    first = split_sentences(answer)[0]
    assert "single-query" in first and "multiple-query" in first and re.search(r"\]\(image\d+\)", first), answer
    assert "63.75" not in answer and "71.25" not in answer  # the axis ticks of its panels


def test_a_two_part_question_is_judged_part_by_part(answered: dict[str, dict]) -> None:
    # the DPR paper says how many questions per second it processes (995.0), and nothing of MS MARCO:
    # each part has its own verdict. Part 2 is said missing, or what is written for it is flagged as
    # not answering it. Part 1 is answered with the paper's figure or said missing: which, is the
    # fitted ranker's call (the one fitted with the page features ranks page 5's captions, where
    # the context's first quotes are, over the sentence on page 7); a wrong number never passes
    row = answered["two-parts"]
    reason = row["relevance_reason"] if row["answerable"] else row["abstain_reason"]
    assert re.search(r"part 2 (said missing|not answered: it does not mention .*MARCO)", reason), row
    part_1 = re.match(r"part 1 (answered|said missing)", reason)
    assert part_1 is not None, row
    sentences = split_sentences(row["answer_md"])
    if part_1.group(1) == "answered":
        assert "995.0" in sentences[0] and re.search(r"\[\d+\]", sentences[0]), row
        assert row["addresses_question"] is ("part 2 said missing" in reason), row
    # no sentence that answers neither part
    assert len(sentences) <= 3, sentences
