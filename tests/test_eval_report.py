"""Breakdowns, selection by position, and the evaluation report (Markdown, self-contained HTML, PNG plots)
on the MMDocRAG-format fixture (tests/fixtures/mmdocrag)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

from interleaf.evaluate.breakdowns import breakdown, by_facts, selection_by_position
from interleaf.evaluate.mmdocrag import MMDocRAGItem, read_mmdocrag
from interleaf.evaluate.report import (
    MetricRow,
    read_rows,
    render_headline,
    rows_from_breakdown,
    rows_from_positions,
    rows_from_values,
    write_report,
)

FIXTURE = Path(__file__).parent / "fixtures" / "mmdocrag"


@pytest.fixture(scope="module")
def items() -> list[MMDocRAGItem]:
    # q_id 0, 2, 3 (15 quotes) then 1 (20 quotes)
    return read_mmdocrag(FIXTURE / "sample_15.jsonl").items + read_mmdocrag(FIXTURE / "sample_20.jsonl").items


def ids(group: list[MMDocRAGItem]) -> list[int]:
    return sorted(int(i.q_id) for i in group)


def test_breakdowns_by_what_the_gold_evidence_is(items: list[MMDocRAGItem]) -> None:
    def split(name: str) -> dict[str, list[int]]:
        return breakdown(items, by_facts(name, MMDocRAGItem.facts), ids)

    assert split("question_type") == {"Analytical": [1], "Comparative": [0], "Descriptive": [3], "Interpretative": [2]}
    # gold pages: q0 pages 4 and 5; q1 pages 5 and 11; q2 page 11 only; q3 page 3 only
    assert split("page_span") == {"cross-page": [0, 1], "single-page": [2, 3]}
    # evidence types: q0 table+figure+Text, q1 Table+Text, q2 Text, q3 Table+Text; case and order ignored
    assert split("evidence_type") == {"figure": [0], "table": [0, 1, 3], "text": [0, 1, 2, 3]}
    assert split("modality_span") == {"cross-modal": [0, 1, 3], "single-modal": [2]}
    # gold image quotes: q0 two, q1 two, q2 none, q3 one
    assert split("image_count") == {"multi-image": [0, 1], "no-image": [2], "single-image": [3]}
    assert split("document") == {"dpr-emnlp2020": [0, 1, 2, 3]}


def test_breakdown_orders_groups_naturally_and_leaves_out_records_without_a_group() -> None:
    records = ["p10", "p2", "p1", "skip", "p2"]
    result = breakdown(records, lambda r: None if r == "skip" else r, len)
    assert list(result) == ["p1", "p2", "p10"]
    assert result == {"p1": 1, "p2": 2, "p10": 1}


def test_selection_rate_by_context_position(items: list[MMDocRAGItem]) -> None:
    cited = {0: {"text9", "image2"}, 2: set(), 3: {"image2", "text7"}, 1: {"text2", "text6", "image5", "text1"}}
    samples = [([q.quote_id for q in i.request("text").quotes], set(i.gold_quotes), cited[int(i.q_id)]) for i in items]
    rates = {p.position: (p.gold, p.cited) for p in selection_by_position(samples)}
    # Positions are text quotes first, then image quotes (§4.6): in a 15-quote context image2 is at 12,
    # image5 at 15; in the 20-quote one image2 is at 14, image5 at 17.
    # q0 gold at 4, 9, 12, 15 (cited 9, 12); q2 at 3, 6 (none cited); q3 at 7, 12 (both cited);
    # q1 at 2, 6, 10, 14, 17 (cited 2, 6, 17; text1 is cited but not gold: it counts nowhere).
    expected = {2: (1, 1), 3: (1, 0), 4: (1, 0), 6: (2, 1), 7: (1, 1), 9: (1, 1), 10: (1, 0), 12: (2, 2)}
    expected |= {14: (1, 0), 15: (1, 0), 17: (1, 1)}
    assert len(rates) == 20  # the longest context
    assert {p: v for p, v in rates.items() if v[0]} == expected
    positions = selection_by_position(samples)
    assert positions[5].rate == 0.5  # position 6: one of two gold quotes cited
    assert positions[0].rate is None  # position 1 never held a gold quote


@dataclass(frozen=True)
class Value:  # the shape the metric functions return (name, value, n, note)
    name: str
    value: float | None
    n: int
    note: str = ""


def _quote_f1(group: list[MMDocRAGItem]) -> list[Value]:
    # a fixed per-question F1 (q0 0.5, q1 1.0, q2 0.0, q3 0.8): the report only has to show the means
    per_question = {0: 0.5, 1: 1.0, 2: 0.0, 3: 0.8}
    return [Value("quote_f1", sum(per_question[int(i.q_id)] for i in group) / len(group), len(group))]


def _run_rows(items: list[MMDocRAGItem], judge: bool) -> list[MetricRow]:
    common = {"run_id": "run-1", "qset": "mmdocrag:sample", "variant": "full", "scope": "fixed"}
    rows = rows_from_values(
        [Value("quote_f1", 0.575, 4, "per question, averaged"), Value("bleu", 0.15, 4), Value("rouge_l", 0.31, 4)],
        **common,
    )
    criteria = ("judge_fluency", "judge_citation_quality", "judge_text_image_coherence", "judge_mean")
    scores = (4.5, 3.0, 3.5, 3.67)
    rows += rows_from_values(
        [Value(c, s if judge else None, 4 if judge else 0, "" if judge else "not computed: no judge configured")
         for c, s in zip(criteria, scores, strict=True)],
        **common,
    )  # fmt: skip
    for retriever, values in {"bm25": (0.6, 0.7, 0.8), "minilm": (0.5, 0.65, 0.75)}.items():
        rows += [
            MetricRow("run-1", "qa_dev", "full", "doc", f"recall@{k}", "retriever", retriever, v, 47)
            for k, v in zip((5, 10, 20), values, strict=True)
        ]
    rows.append(MetricRow("run-1", "qa_dev", "full", "doc", "recall@10", value=0.9, n=47))
    by_type = breakdown(items, by_facts("question_type", MMDocRAGItem.facts), _quote_f1)
    rows += rows_from_breakdown(by_type, breakdown="question_type", **common)
    samples = [
        ([q.quote_id for q in i.request("text").quotes], set(i.gold_quotes), set(i.gold_quotes[:1])) for i in items
    ]
    rows += rows_from_positions(selection_by_position(samples), **common)
    return rows


NAMES = {"mmdocrag:sample": "sample_15.jsonl", "qa_dev": "qa_dev.jsonl"}


def test_report_without_a_judge_plots_what_exists_and_says_judge_not_computed(
    items: list[MMDocRAGItem], tmp_path: Path
) -> None:
    rows = _run_rows(items, judge=False)
    md_path, html_path, pngs = write_report(rows, tmp_path / "report", names=NAMES)
    assert sorted(p.name for p in pngs) == [
        "quote_f1_by_question_type.png",
        "recall_at_k.png",
        "selection_by_position.png",
    ]
    for png in pngs:
        pix = pymupdf.Pixmap(str(png))
        assert pix.width > 300 and pix.height > 200
    md = md_path.read_text("utf-8")
    assert "Judge metrics: not computed (no judge configured)." in md
    assert "judge_scores.png" not in md
    # slices are named by their question file and scope, not by the question set's id
    assert "| sample_15.jsonl · fixed | quote_f1 | 0.575 | 4 | per question, averaged |" in md
    assert "| mmdocrag:sample |" not in md
    # a metric no slice computed is one line, not a row or a column of "not computed"
    assert "judge_mean | not computed" not in md
    assert (
        "Not computed in this run: judge_fluency, judge_citation_quality, judge_text_image_coherence, judge_mean "
        "(no judge configured)." in md
    )
    # F1 by question type: Analytical is q1 alone (1.0), Comparative q0 (0.5): each one question, marked
    assert "| Analytical | 1.000 (1)† |" in md and "| Comparative | 0.500 (1)† |" in md
    for png in pngs:
        assert f"]({png.name})" in md
    # the HTML stands alone: every image inline, byte for byte the PNG written beside the Markdown
    page = html_path.read_text("utf-8")
    sources = re.findall(r"src='([^']*)'", page)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert sorted(base64.b64decode(s.split(",", 1)[1]) for s in sources) == sorted(p.read_bytes() for p in pngs)
    assert "Judge metrics: not computed (no judge configured)." in page
    assert read_rows(tmp_path / "report" / "eval_metrics.jsonl") == rows


def test_report_with_a_judge_plots_its_scores(items: list[MMDocRAGItem], tmp_path: Path) -> None:
    md_path, _, pngs = write_report(_run_rows(items, judge=True), tmp_path)
    assert "judge_scores.png" in {p.name for p in pngs}
    assert "Judge metrics: not computed" not in md_path.read_text("utf-8")


def test_report_of_a_run_with_nothing_to_plot(tmp_path: Path) -> None:
    rows = [MetricRow("r", "qa_dev", "full", "doc", "bleu", value=None, note="not computed: no reference answers")]
    md_path, html_path, pngs = write_report(rows, tmp_path)
    assert pngs == []
    md = md_path.read_text("utf-8")
    assert "Retrieval recall: not computed in this run." in md
    assert "Quote selection: not computed in this run." in md
    assert "No headline metric was computed." in md
    assert "Not computed in this run: bleu (no reference answers)." in md
    assert "<img" not in html_path.read_text("utf-8")


def test_headline_table_for_the_terminal(items: list[MMDocRAGItem]) -> None:
    text = render_headline(_run_rows(items, judge=False), NAMES)
    lines = text.splitlines()
    assert lines[0].split() == ["questions", "metric", "value", "n"]
    body = [line.rsplit(None, 3) for line in lines[2:5]] + [lines[5].rsplit(None, 3)]
    # breakdown rows stay out; the order is question set, variant, scope, then HEADLINE_METRICS
    assert [tuple(b) for b in body] == [
        ("sample_15.jsonl · fixed", "quote_f1", "0.575", "4"),
        ("sample_15.jsonl · fixed", "bleu", "0.150", "4"),
        ("sample_15.jsonl · fixed", "rouge_l", "0.310", "4"),
        ("qa_dev.jsonl · doc", "recall@10", "0.900", "47"),
    ]
    assert lines[6] == "not computed: judge_mean (no judge configured)"


def _answer_rows() -> list[MetricRow]:
    """answer metrics as the evaluate stage writes them: overall and by question type."""
    common = ("run-1", "qa", "full", "doc")
    rows = []
    for group, breakdown_name, correct, n, words, asked in (
        ("all", "all", 0.75, 8, 31.0, 10),
        ("table_cell", "question_type", 0.8, 5, 24.0, 5),
        ("figure", "question_type", 1.0, 2, 40.0, 2),
        ("unanswerable", "question_type", None, 0, 12.0, 2),
    ):
        rows += [
            MetricRow(*common, "answer_correct", breakdown_name, group, correct, n),
            MetricRow(*common, "median_words", breakdown_name, group, words, asked),
            MetricRow(*common, "judge_mean", breakdown_name, group, None, 0, "not computed: no judge configured"),
        ]
    rows.append(MetricRow(*common, "abstention_recall", "question_type", "unanswerable", 1.0, 2))
    rows.append(MetricRow(*common, "abstention_recall", "all", "all", 1.0, 2))
    return rows


def test_answers_by_question_type_drop_what_no_group_computed(tmp_path: Path) -> None:
    rows = _answer_rows()
    text = render_headline(rows, {"qa": "qa_dev_answers.jsonl"})
    lines = [line.split("  ") for line in text.splitlines()]
    cells = [[c.strip() for c in line if c.strip()] for line in lines]
    # one slice: named once above each table, not repeated in a column
    assert cells[0] == ["qa_dev_answers.jsonl · doc"] and cells[1] == ["metric", "value", "n"]
    assert ["answer_correct", "0.750", "8"] in cells
    assert ["median_words", "31", "10"] in cells  # a count, not a share
    # no unanswerable question has a must_include: no value there, not "not computed (0)"
    assert ["unanswerable", "–", "1.000 (2)†", "12 (2)†"] in cells
    header = next(line for line in text.splitlines() if "question type" in line)
    assert header.split() == ["question", "type", "answer_correct", "abstention_recall", "median_words"]
    assert "judge_mean" not in header
    figure_line = next(line for line in text.splitlines() if line.startswith("figure "))
    assert "1.000 (2)†" in figure_line  # two questions: marked, too few to read
    md = write_report(rows, tmp_path, names={"qa": "qa_dev_answers.jsonl"})[0].read_text("utf-8")
    assert "## Answers" in md and "answer_correct_by_question_type.png" in md
    by_type = md[md.index("## By question type") :]
    assert "judge_mean" not in by_type.split("\n\n")[2]  # the table's header: no all-"not computed" column


def test_plots_name_the_file_and_scope_and_mark_groups_too_small(items: list[MMDocRAGItem]) -> None:
    from interleaf.evaluate.plots import groups_figure, positions_figure, recall_figure

    rows = _run_rows(items, judge=False)
    legend = [t.get_text() for t in recall_figure(rows, NAMES).axes[0].get_legend().get_texts()]
    assert legend == ["all evidence · qa_dev.jsonl · doc (n=47)", "bm25 · qa_dev.jsonl · doc (n=47)",
                      "minilm · qa_dev.jsonl · doc (n=47)"]  # fmt: skip
    # quote F1 by question type: one question each, so no bar is drawn: each is a hollow mark with n=1
    ax = groups_figure(rows, "quote_f1", "question_type", "F1", NAMES).axes[0]
    assert [p.get_height() for p in ax.patches if p.get_height() > 0] == []
    assert sorted(t.get_text() for t in ax.texts if t.get_text().startswith("n=")) == ["n=1†"] * 4
    # selection by position: positions with fewer than 3 gold quotes are not connected, and each shows its n
    ax = positions_figure(rows, NAMES).axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == []  # every position of the fixture holds 1 or 2 gold quotes
    assert sorted({t.get_text() for t in ax.texts}) == ["1†", "2†"]
    assert ax.get_legend().get_texts()[-1].get_text() == "hollow †: n < 3, too few to read"
