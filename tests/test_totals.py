"""A total the question asks for, worked out from the rows (or columns) it names (totals.py), on
real tables: the dev half's dataset statistics (its question mlb-D-079) and the DPR paper's Table 1.
Each answer is checked as the product checks it: the sentence that writes the total is supported by
its cited table, and the short answer is the total."""

from __future__ import annotations

import pymupdf
import pytest

from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote, GeneratedAnswer
from tests.conftest import CORPUS
from tests.test_answer_values import _described_table, _table_of


def _lines(path: str, page: int, first: str, count: int) -> list[str]:
    """`count` text lines of a page (0-based), from the line `first`."""
    if not (CORPUS.parent / path).exists():
        pytest.skip(f"{path} is not here")
    with pymupdf.open(CORPUS.parent / path) as document:
        lines = document[page].get_text().split("\n")
    return lines[lines.index(first) : lines.index(first) + count]


def _answer(question: str, table: ContextQuote) -> GeneratedAnswer:
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, (table,))], lambda p: b"")
    assert a.error is None
    return a


def _supported(a: GeneratedAnswer, table: ContextQuote, question: str) -> None:
    checked = check_answer(a.markdown, (table,), question=question)
    assert checked.sentences and all(s.supported for s in checked.sentences), [
        (s.text, s.citations) for s in checked.sentences
    ]


@pytest.fixture(scope="module")
def dataset_statistics() -> ContextQuote:
    """Table 3 of the dev half's recommendation paper (page 4): three datasets as columns."""
    doc = "2303.05039v2.pdf"
    body = _lines(f"benchmarks/mmlongbench-dev/pdfs/{doc}", 3, "# of items", 24)
    caption = "Table 3: Statistics of the three datasets used in our study."
    header = "| Dataset | Amazon-beauty | Amazon-music | Personality’18 |"
    return _described_table(doc, 3, caption, _table_of(body, 3, header))


def test_a_total_over_the_columns_a_shared_name_groups(dataset_statistics: ContextQuote) -> None:
    question = "How many items in total of Amazon related datasets in the paper?"  # mlb-D-079's
    a = _answer(question, dataset_statistics)
    assert "Amazon-beauty 85; Amazon-music 8,895 for # of items, in total 8,980 (85 + 8,895)" in a.markdown, a.markdown
    assert a.short_answer == "8980"
    _supported(a, dataset_statistics, question)
    # a name one column holds is no group: the cell is read, nothing added up
    one = _answer("How many items in total does the Personality’18 dataset have?", dataset_statistics)
    assert "in total" not in one.markdown and "21,776" in one.markdown, one.markdown
    # no total asked: the two cells are given, not added up
    both = _answer("How many items do the Amazon datasets have?", dataset_statistics)
    assert "in total" not in both.markdown and "8,895" in both.markdown, both.markdown


@pytest.fixture(scope="module")
def question_counts() -> ContextQuote:
    """DPR's Table 1 (page 4): five datasets as rows; Train has two columns (original, used)."""
    body = _lines("corpus/docs/dpr-emnlp2020.pdf", 3, "Natural Questions", 25)
    caption = "Table 1: Number of questions in each QA dataset."
    rows = _table_of(body, 4, "| Dataset | Train | Train | Dev | Test |")
    return _described_table("dpr-emnlp2020.pdf", 3, caption, rows)


def test_a_total_over_the_rows_the_question_names(question_counts: ContextQuote) -> None:
    question = "How many test questions do Natural Questions and TriviaQA have in total?"
    a = _answer(question, question_counts)
    assert "in total 14,923 (3,610 + 11,313)" in a.markdown, a.markdown
    assert "for Natural Questions" in a.markdown and "for TriviaQA" in a.markdown, a.markdown
    assert a.short_answer == "14923"
    _supported(a, question_counts, question)
    # three named, one of which the table has no row for: a sum of two would leave it out
    three = "How many test questions do Natural Questions, TriviaQA and BioASQ have in total?"
    missing = _answer(three, question_counts)
    assert "in total" not in missing.markdown, missing.markdown


@pytest.fixture(scope="module")
def retrieval_accuracy() -> ContextQuote:
    """DPR's Table 2 (page 5): Top-20 and Top-100 accuracy on five datasets, a row per retriever."""
    lines = _lines("corpus/docs/dpr-emnlp2020.pdf", 4, "Training", 75)
    datasets = lines[4:9]
    header = "| Training | Retriever | " + " | ".join(f"{k} · {d}" for k in lines[2:4] for d in datasets) + " |"
    rows: list[list[str]] = []
    labels: list[str] = []
    values: list[str] = []
    for token in lines[14:]:
        if token.startswith("Table 2"):
            break
        if token.replace(".", "").isdigit():
            values.append(token)
        else:
            labels.append(token)
        if len(values) == 10:  # a row: its training (blank under the one above) and retriever, then ten values
            rows.append([*([""] * (2 - len(labels))), *labels, *values])
            labels, values = [], []
    body = ["| " + " | ".join(r) + " |" for r in rows]
    table = [header, "|" + "---|" * 12, *body]
    assert len(rows) == 5 and all(len(r) == 12 for r in rows), rows
    return _described_table("dpr-emnlp2020.pdf", 4, lines[-3], table)


def test_a_total_over_the_columns_the_question_names_apart(retrieval_accuracy: ContextQuote) -> None:
    question = "What is the Top-20 accuracy of BM25 on NQ and TriviaQA combined?"
    a = _answer(question, retrieval_accuracy)
    # the cells written are the cells added: Top-20 of each, never Top-100 of NQ, which also names NQ
    assert "Top-20 · NQ 59.1; Top-20 · TriviaQA 66.9 for None, BM25, in total 126.0 (59.1 + 66.9)" in a.markdown, (
        a.markdown
    )
    _supported(a, retrieval_accuracy, question)
    # one of the two named has no column: nothing added up
    b = _answer("What is the Top-20 accuracy of BM25 on NQ and BioASQ combined?", retrieval_accuracy)
    assert "in total" not in b.markdown and "59.1" in b.markdown, b.markdown
