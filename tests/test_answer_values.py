"""How the offline answer step reads values off the MMLongBench-Doc dev half's own pages
(../shared/benchmarks/mmlongbench-dev/, the PDFs read with PyMuPDF): a difference asked of a
sentence's two percentages is worked out, a row label counts as stated by a question that
writes it in the plural or the singular, and a superlative compares the rows its question names,
the best under a "↓" header being the least (one case on a corpus paper's grouped table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymupdf
import pytest

from interleaf.describe.offline_describer import compose
from interleaf.describe.protocol import DescribeRequest
from interleaf.evidence import fold
from interleaf.generate.asking import question_parts
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.differences import sentence_difference
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.sentences import TableRow
from interleaf.generate.table_cells import label_chars_stated
from tests.support.dev_half import BENCH


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


def _table_of(lines: list[str], width: int, header: str) -> list[str]:
    """Markdown rows from a page's text lines: each row's label line, then its `width` values."""
    rows = [header, "|" + "---|" * (header.count("|") - 1)]
    for i in range(0, len(lines), width + 1):
        rows.append("| " + " | ".join(lines[i : i + width + 1]) + " |")
    return rows


def _described_table(doc: str, page: int, caption: str, rows: list[str]) -> ContextQuote:
    """A table as the generator is given it: an image quote whose text is the offline describer's
    (its caption and its Markdown rows)."""
    table_md = "\n".join(rows)
    described = compose(DescribeRequest("t", "table", page, b"", caption=caption, table_md=table_md)).text
    assert described is not None
    return ContextQuote("t", "image", 1, "paper", doc, page, "table", described, caption=caption, vlm_text=described)


def test_a_superlative_compares_the_rows_the_question_names(dev_questions: dict[str, dict]) -> None:
    # "which temperature gives ChatGPT the highest alignment score?" over Table 3 of the paper (page
    # 7): GPT-4 (0.5) aligns best of all the rows, ChatGPT (0.1) best of the ChatGPT rows asked about
    q = dev_questions["mlb-D-011"]
    with pymupdf.open(BENCH / "pdfs" / q["doc"]) as document:
        lines = document[6].get_text().split("\n")
    body = lines[lines.index("GPT-4 (0.5)") : lines.index("Vicuna-13B") + 9]
    measures = ("Micro Corr.", "Micro Prec.", "Micro Rec.", "Micro F1.", "Macro Prec.", "Macro Rec.", "Macro F1.")
    header = "| Model | Align. | " + " | ".join(measures) + " |"
    caption = next(line for line in lines if line.startswith("Table 3:"))
    table = _described_table(q["doc"], 6, caption, _table_of(body, 8, header))
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (table,))], lambda p: b"")
    assert a.error is None
    assert "85.9(2.5) for ChatGPT (0.1), the highest of the table's ChatGPT rows" in a.markdown, a.markdown
    assert a.short_answer is not None and "0.1" in a.short_answer, a.short_answer
    checked = check_answer(a.markdown, (table,), question=q["question"])
    assert all(s.supported for s in checked.sentences), [(s.text, s.citations) for s in checked.sentences]
    # a question that names no row's word compares every row
    (b,) = OfflineGenerator(OfflineConfig()).generate(
        [AnswerRequest("q", "Which model has the highest alignment score?", (table,))], lambda p: b""
    )
    assert "for GPT-4 (0.5), the highest of the table's rows" in b.markdown, b.markdown


def test_the_best_row_under_a_down_arrow_holds_the_least_value(dev_questions: dict[str, dict]) -> None:
    # "which baseline did the pre-trained Vicuna-13B perform best on MAVEN-ERE?" over Table 3 (page 8):
    # the Vicuna rows only (Llama2's CoT row is higher), and under "LI (%) ↓" the best is the least
    # (before, the most: "vanilla ICL", 21.2, was one of the two rows called best)
    q = dev_questions["mlb-D-266"]
    with pymupdf.open(BENCH / "pdfs" / q["doc"]) as document:
        lines = document[7].get_text().split("\n")
    caption = next(line for line in lines if line.startswith("Table 3:"))
    body = lines[lines.index("Vicuna-13B-PT") : lines.index(caption)]
    measures = ("Micro-F1 (%)", "LI (%) ↓")
    rows = ["| Model |  | " + " | ".join(f"{d} {m}" for d in ("MAVEN-ERE", "Causal-TimeBank") for m in measures) + " |"]
    rows.append("|---|---|---|---|---|---|")
    model = ""
    while body:
        if body[0].endswith("-PT"):
            model = body.pop(0)
        rows.append(f"| {model} | {' | '.join(body[:5])} |")
        body = body[5:]
    assert len(rows) == 14, rows
    table = _described_table(q["doc"], 7, caption, rows)
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (table,))], lambda p: b"")
    assert a.error is None
    written = " ".join(a.markdown.split())  # the page's spaces may be non-breaking ones
    assert "for Vicuna-13B-PT, CoT w. logical constraints, the best of the table's Vicuna-13B-PT rows" in written, (
        written
    )
    assert "vanilla ICL" not in a.markdown and "Llama2-13B-PT," not in a.markdown, a.markdown
    checked = check_answer(a.markdown, (table,), question=q["question"])
    assert all(s.supported for s in checked.sentences), [(s.text, s.citations) for s in checked.sentences]
    # one item printed over several rows (its label repeated) is no comparison: with only the model
    # column to name them, the Vicuna rows are all "Vicuna-13B-PT" and every row is compared
    one_label = [re.sub(r"^\| ([^|]+) \| ([^|]+) \|", r"| \1 |", r) for r in rows[2:]]
    named = _described_table(q["doc"], 7, caption, [rows[0], rows[1], *one_label])
    (b,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", q["question"], (named,))], lambda p: b"")
    assert "Vicuna-13B-PT rows" not in b.markdown, b.markdown


def test_a_superlative_compares_the_rows_of_the_group_the_question_names(corpus: Path) -> None:
    # Table 4 of the MAVIS paper (page 6, in ../shared/corpus/docs) groups its rows under a model
    # ("GPT-4o" over "+ Text-RAG", "+ Image-RAG", "+ Multi-RAG"): asked for one model's best
    # groundedness, the answer compares that model's rows (Claude's 79.1 is the column's highest)
    with pymupdf.open(corpus / "docs" / "mavis-aaai2026.pdf") as document:
        lines = document[5].get_text().split("\n")
    start = lines.index("LLaVa-OneVision")
    measures = ("F1-score", "Complete", "Relevant")
    header = ["Informativeness · " + m for m in measures] + ["Groundedness · F1-score", "Groundedness · Recall"]
    header += ["Groundedness · Precision", "Fluency MAUVE", "Retrieved · Text", "Retrieved · Image"]
    header += ["Utilized · Text", "Utilized · Image"]
    rows = ["|  | " + " | ".join(header) + " |", "|---" * 12 + "|"]
    i = start
    while len(rows) < 2 + 4 * 4:
        if lines[i].startswith("+ "):
            rows.append("| " + " | ".join(lines[i : i + 12]) + " |")
            i += 12
        else:
            rows.append(f"| {lines[i]} |" + " |" * 11)
            i += 1
    assert "| GPT-4o |" in rows[-4] and "| + Text-RAG | 37.0 |" in rows[-3], rows
    table = _described_table("mavis-aaai2026.pdf", 5, "Table 4", rows)
    question = "Which GPT-4o setting has the highest groundedness F1-score?"
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, (table,))], lambda p: b"")
    assert "73.4 for GPT-4o, + Text-RAG, the highest of the table's GPT-4o rows" in a.markdown, a.markdown
    assert a.short_answer == "GPT-4o + Text-RAG", a.short_answer
