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
