"""How the offline answer step reads values off the MMLongBench-Doc dev half's own pages
(../shared/benchmarks/mmlongbench-dev/, the PDFs read with PyMuPDF): a difference asked of a
sentence's two percentages is worked out, and a row label counts as stated by a question that
writes it in the plural or the singular."""

from __future__ import annotations

import json
import re

import pymupdf
import pytest

from interleaf.evidence import fold
from interleaf.generate.asking import question_parts
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.sentences import TableRow
from interleaf.generate.table_cells import label_chars_stated, sentence_difference
from tests.conftest import CORPUS

BENCH = CORPUS.parent / "benchmarks" / "mmlongbench-dev"


@pytest.fixture(scope="module")
def dev_questions() -> dict[str, dict]:
    path = BENCH / "qa_dev.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return {q["id"]: q for q in map(json.loads, path.read_text().splitlines())}


def _page_text(doc: str, page: int) -> str:
    """A page's text (0-based), its white space folded."""
    with pymupdf.open(BENCH / "pdfs" / doc) as document:
        return " ".join(document[page].get_text().split())


def test_a_difference_asked_of_a_sentence_is_worked_out_from_its_two_percentages(
    dev_questions: dict[str, dict],
) -> None:
    # "the percentage gap between male 65+ ... who use internet and broadband at home": the report's
    # second page states both shares in one sentence, and the gold (12%) is their difference
    q = dev_questions["mlb-D-065"]
    page = _page_text(q["doc"], 1)
    start = page.index("Today, 59% of seniors")
    sentence = page[start : page.index(".", start) + 1]
    assert "47%" in sentence, sentence
    quote = ContextQuote("q1", "text", 1, "pew", q["doc"], 1, "text", sentence)
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (quote,))], lambda p: b"")
    assert a.error is None
    assert "at home, a difference of 12% (59% − 47%) [1]." in a.markdown, a.markdown
    assert a.short_answer == "12"
    # the sentence with its worked-out value is backed by the quote that prints both values
    checked = check_answer(a.markdown, (quote,), question=q["question"])
    assert all(s.supported for s in checked.sentences), [(s.text, s.citations) for s in checked.sentences]
    # the same sentence in a figure's description (an image quote): the answer states the
    # difference too, as its short answer gives it
    figure = ContextQuote("f1", "image", 1, "pew", q["doc"], 1, "figure", sentence, vlm_text=sentence)
    (b,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (figure,))], lambda p: b"")
    assert b.short_answer == "12" and "a difference of 12% (59% − 47%)" in b.markdown, b.markdown
    (part,) = question_parts(q["question"])
    # three percentages, or a change ("+6%") as one of two: which two are compared is not known
    assert sentence_difference(part, "In all, 59% go online, 47% have broadband and 77% own a cell phone.") is None
    assert sentence_difference(part, "59% go online, up +6% on last year.") is None
    # nor is anything worked out where no difference is asked
    (plain,) = question_parts("What share of seniors go online?")
    assert sentence_difference(plain, sentence) is None


def test_a_row_label_is_stated_by_the_question_in_the_plural(dev_questions: dict[str, dict]) -> None:
    # "how many percentage of surveyed adults, Republicans, and Democrats believed ...": the table on
    # page 12 prints the rows "Republican" and "Democrat"; read letter for letter, no row was named and
    # the Republicans' part was answered from a sentence
    q = dev_questions["mlb-D-158"]
    page = _page_text(q["doc"], 11)
    header = ("", "Very/Fairly well", "Not too/Not at all well")

    def row(label: str) -> TableRow:
        m = re.search(rf"\b{label} (\d+) (\d+) ", page)
        assert m, (label, page)
        return TableRow((label, m.group(1), m.group(2)), header)

    parts = question_parts(q["question"])
    republicans = next(p for p in parts if "Republicans" in p.text)
    asked = fold(republicans.text)
    assert label_chars_stated(row("Republican"), asked) == len("republican")
    assert label_chars_stated(row("Independent"), asked) == 0
    # the singular states a plural label: "Republicans" as a row, "a Republican voter" asking
    assert label_chars_stated(TableRow(("Republicans", "27"), header[:2]), fold("What share of a Republican voter")) > 0
    # a longer word is not the label: "Republicanism" does not state "Republican"
    assert label_chars_stated(row("Republican"), fold("What does Republicanism hold?")) == 0


def test_parts_answered_from_one_table_name_it_once(dev_questions: dict[str, dict]) -> None:
    # the same question over its page-12 table as the generator is given it (Markdown, an image
    # quote): each group's share from its own row, the Republicans' from the row "Republican", and
    # the table named once, not once per part ("…; The table on page 12 gives …")
    q = dev_questions["mlb-D-158"]
    page = _page_text(q["doc"], 11)
    labels = ("Total", "18-29", "30-49", "50-64", "65+", "Postgrad", "Republican", "Democrat", "Independent")
    rows = ["| | Very/Fairly well % | Not too/Not at all well % |", "|---|---|---|"]
    for label in labels:
        m = re.search(rf"(?<![\w-]){re.escape(label)} (\d+) (\d+) ", page)
        assert m, (label, page)
        rows.append(f"| {label} | {m.group(1)} | {m.group(2)} |")
    table = ContextQuote("t1", "image", 1, "pew", q["doc"], 11, "table", "\n".join(rows))
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (table,))], lambda p: b"")
    assert a.error is None
    assert "27 for Republican" in a.markdown and "64 for Democrat" in a.markdown, a.markdown
    assert a.markdown.count("The table on page 12 gives") == 1, a.markdown
    assert a.short_answer == "['46', '27', '64']", a.short_answer
    checked = check_answer(a.markdown, (table,), question=q["question"])
    assert all(s.supported for s in checked.sentences), [(s.text, s.citations) for s in checked.sentences]
