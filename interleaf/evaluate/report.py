"""The evaluation report and the terminal's headline, made of `eval_metrics` rows (metric_rows.py).

Written for a reader, not for the warehouse: slices are named by their question file and scope
(`qa_dev_answers.jsonl · doc`), not by hashes; a metric no slice computed is not a column anywhere
but one line saying it was not computed and why; every value carries its n, and a value over fewer
than `MIN_N` items is marked (tables) or drawn as a mark instead of a bar or a line point (plots).
`write_report` writes report.md (PNGs beside it), a self-contained report.html and the rows as JSON
lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from interleaf.evaluate.breakdowns import natural_key
from interleaf.evaluate.metric_rows import (
    NOT_COMPUTED,
    MetricLike,
    MetricRow,
    format_value,
    read_rows,
    rows_from_breakdown,
    rows_from_positions,
    rows_from_values,
    slice_label,
    text_table,
    write_rows,
)
from interleaf.evaluate.report_blocks import Block, Heading, Image, Para, Table, to_html, to_markdown

__all__ = [
    "NOT_COMPUTED",
    "MetricLike",
    "MetricRow",
    "format_value",
    "read_rows",
    "render_headline",
    "rows_from_breakdown",
    "rows_from_positions",
    "rows_from_values",
    "text_table",
    "write_report",
    "write_rows",
]

# Whether an answer is right, as a reader checks it (correctness.py), by question type.
ANSWER_METRICS = (
    "answer_correct",
    "abstention_recall",
    "false_abstention",
    "median_words",
    "answers_addressing_question",
)
# Metrics the headline shows, in this order, where a run computed them (breakdown "all").
HEADLINE_METRICS = (
    "recall@5",
    "recall@10",
    "recall@15",
    "recall@20",
    *ANSWER_METRICS,
    "mmlb_accuracy",
    "mmlb_f1",
    "page_recall@5",
    "quote_f1",
    "quote_f1_mmdocrag",
    "text_quote_f1",
    "image_quote_f1",
    "bleu",
    "rouge_l",
    "citations_valid",
    "sentences_supported",
    "short_answer_number_recall",
    "citation_f1",
    "groundedness_f1",
    "judge_mean",
)
JUDGE_PREFIX = "judge_"
# A value over fewer items than this is marked, not read as a finding (one question is 0 or 1).
MIN_N = 3
TOO_FEW = "†"
# Metrics per breakdown table: more columns than this are split over several tables.
COLUMNS_PER_TABLE = 6
COUNT_METRICS = frozenset({"median_words"})  # counts, not shares: shown without decimals


def cell(row: MetricRow) -> str:
    """`0.750 (8)`; `1.000 (2)†` over too few; `–` where this group has no value or nothing to average
    (a micro-averaged precision over 0 citations is 0 by eval_all.py's convention, not a finding)."""
    if row.value is None or row.n == 0:
        return "–"
    return f"{format_metric(row.metric, row.value)} ({row.n}){TOO_FEW if row.n < MIN_N else ''}"


def format_metric(metric: str, value: float | None) -> str:
    if value is not None and metric in COUNT_METRICS:
        return f"{value:g}"
    return format_value(value)


# -- the headline -------------------------------------------------------------------------------------


def headline_rows(rows: Sequence[MetricRow], metrics: Sequence[str] = HEADLINE_METRICS) -> list[MetricRow]:
    """The computed headline values, by slice then in `metrics` order."""
    order = {m: i for i, m in enumerate(metrics)}
    chosen = [r for r in rows if r.breakdown == "all" and r.metric in order and r.value is not None]
    return sorted(chosen, key=lambda r: (r.qset, r.variant, r.scope, order[r.metric]))


def not_computed(rows: Sequence[MetricRow], metrics: Sequence[str] | None = None) -> list[str]:
    """`metric, metric (why)` for the metrics (of `metrics`, or any) no slice computed, grouped by why:
    the reason a row's note gives after "not computed:", else that nothing was there to average."""
    computed = {r.metric for r in rows if r.value is not None}
    reasons: dict[str, str] = {}
    for r in rows:
        if r.metric in computed or (metrics is not None and r.metric not in metrics) or r.metric in reasons:
            continue
        _, said, why = r.note.partition(f"{NOT_COMPUTED}:")
        reasons[r.metric] = why.split(";")[0].strip() if said else "nothing to average over"
    grouped: dict[str, list[str]] = {}
    for metric, why in reasons.items():
        grouped.setdefault(why, []).append(metric)
    return [f"{', '.join(names)} ({why})" for why, names in grouped.items()]


def by_type_table(
    rows: Sequence[MetricRow], names: Mapping[str, str] | None = None
) -> tuple[list[str], list[list[str]]]:
    """ANSWER_METRICS overall and by question type, per slice: the header and the body."""
    chosen = [r for r in rows if r.metric in ANSWER_METRICS and r.breakdown in ("all", "question_type")]
    metrics = [m for m in ANSWER_METRICS if any(r.metric == m and r.value is not None for r in chosen)]
    body = []
    for key in sorted({(r.qset, r.variant, r.scope) for r in chosen}):
        here = [r for r in chosen if (r.qset, r.variant, r.scope) == key]
        groups = ["all", *sorted({r.group for r in here if r.breakdown == "question_type"}, key=natural_key)]
        values = {(r.group if r.breakdown == "question_type" else "all", r.metric): r for r in here}
        for group in groups:
            line = [slice_label(here[0], names), group]
            line += [cell(values[(group, m)]) if (group, m) in values else "" for m in metrics]
            body.append(line)
    return (["questions", "question type", *metrics] if metrics else []), (body if metrics else [])


def one_slice(header: Sequence[str], body: Sequence[Sequence[str]]) -> tuple[str | None, list[str], list[list[str]]]:
    """A table whose first column ("questions") holds one slice everywhere loses the column; the
    slice is said once, above it. -> (that slice or None, header, body)."""
    slices = {line[0] for line in body}
    if len(slices) != 1:
        return None, list(header), [list(line) for line in body]
    return slices.pop(), list(header[1:]), [list(line[1:]) for line in body]


def render_headline(rows: Sequence[MetricRow], names: Mapping[str, str] | None = None) -> str:
    """The headline for the terminal (plain text): computed values, what was not computed and why,
    and the answer metrics by question type."""
    body = [[slice_label(r, names), r.metric, format_metric(r.metric, r.value), str(r.n)] for r in headline_rows(rows)]
    title, header, body = one_slice(["questions", "metric", "value", "n"], body)
    parts = ([title] if title else []) + [text_table(header, body)]
    missing = not_computed(rows, HEADLINE_METRICS)
    if missing:
        parts.append(f"{NOT_COMPUTED}: " + "; ".join(missing))
    header, by_type = by_type_table(rows, names)
    if by_type:
        title, header, by_type = one_slice(header, by_type)
        parts += ["", *([title] if title else []), text_table(header, by_type)]
        parts.append(f"{TOO_FEW} n < {MIN_N}: too few to read as a finding")
    return "\n".join(parts)


# -- the report ---------------------------------------------------------------------------------------


def _pivots(rows: Sequence[MetricRow], breakdown: str, names: Mapping[str, str] | None) -> list[Block]:
    """One table per run slice (split every COLUMNS_PER_TABLE metrics): groups down, the metrics some
    group computed across, each cell the value (n)."""
    blocks: list[Block] = []
    chosen = [r for r in rows if r.breakdown == breakdown]
    for key in sorted({(r.qset, r.variant, r.scope) for r in chosen}):
        here = [r for r in chosen if (r.qset, r.variant, r.scope) == key]
        metrics = list(dict.fromkeys(r.metric for r in here if r.value is not None))
        if not metrics:
            continue
        groups = sorted({r.group for r in here}, key=natural_key)
        cells = {(r.group, r.metric): cell(r) for r in here}
        blocks.append(Para(slice_label(here[0], names)))
        for start in range(0, len(metrics), COLUMNS_PER_TABLE):
            columns = metrics[start : start + COLUMNS_PER_TABLE]
            body = tuple((g, *(cells.get((g, m), "") for m in columns)) for g in groups)
            blocks.append(Table((breakdown, *columns), body))
    return blocks


def _build(
    rows: Sequence[MetricRow], out_dir: Path, title: str, names: Mapping[str, str] | None
) -> tuple[list[Block], list[Path]]:
    from interleaf.evaluate import plots  # matplotlib costs ~1 s to import: only reports pay it

    pngs: list[Path] = []
    sets = sorted({(slice_label(r, names), r.qset) for r in rows})
    described = ", ".join(f"{label} (question set {qset})" for label, qset in sets) or "none"
    runs = ", ".join(sorted({r.run_id for r in rows})) or "none"
    measured = ", ".join(sorted({r.measured_by for r in rows} - {""}))
    blocks: list[Block] = [
        Heading(title, 1),
        Para(f"Questions: {described}. Runs: {runs}." + (f" Measured by code {measured}." if measured else "")),
        Para(
            "Judge scores are 0-5, median_words a count, other values shares in [0, 1]; each value is followed "
            f"by its n (what it averages over); {TOO_FEW} marks n < {MIN_N}, too few to read as a finding; "
            f"– is a group with no value. A metric no slice computed is listed as {NOT_COMPUTED}, not shown as 0."
        ),
    ]

    heads = headline_rows(rows)
    blocks.append(Heading("Headline"))
    if heads:
        lines = [(slice_label(r, names), r.metric, format_metric(r.metric, r.value), str(r.n), r.note) for r in heads]
        title, header, body = one_slice(("questions", "metric", "value", "n", "note"), lines)
        blocks += [Para(title)] if title else []
        blocks.append(Table(tuple(header), tuple(tuple(line) for line in body)))
    else:
        blocks.append(Para("No headline metric was computed."))
    missing = not_computed(rows)
    if missing:
        blocks.append(Para(f"Not computed in this run: {'; '.join(missing)}."))

    def figure(path: Path | None, caption: str) -> None:
        if path is not None:
            pngs.append(path)
            blocks.append(Image(path, caption))

    header, by_type = by_type_table(rows, names)
    if by_type:
        title, header, by_type = one_slice(header, by_type)
        blocks += [Heading("Answers"), *([Para(title)] if title else [])]
        blocks.append(Table(tuple(header), tuple(tuple(line) for line in by_type)))
        correct = plots.plot_groups(
            rows, "answer_correct", "question_type", out_dir / "answer_correct_by_question_type.png",
            "Answers holding every must_include string, by question type", names,
        )  # fmt: skip
        figure(correct, "answer_correct by question type (n: answerable questions of the type)")

    blocks.append(Heading("Retrieval"))
    recall = plots.plot_recall(rows, out_dir / "recall_at_k.png", names)
    figure(recall, "Recall@k per retriever / variant (n: evidence items)")
    if recall is None:
        blocks.append(Para(f"Retrieval recall: {NOT_COMPUTED} in this run."))

    blocks.append(Heading("Quote selection"))
    f1 = plots.plot_groups(
        rows, "quote_f1", "question_type", out_dir / "quote_f1_by_question_type.png",
        "Quote selection F1 by question type", names,
    )  # fmt: skip
    figure(f1, "Quote selection F1 by question type (n: questions)")
    positions = plots.plot_positions(rows, out_dir / "selection_by_position.png", names)
    figure(positions, "Share of gold quotes cited, by their position in the context (MMDocRAG §4.6; n: gold quotes)")
    if f1 is None and positions is None:
        blocks.append(Para(f"Quote selection: {NOT_COMPUTED} in this run."))

    blocks.append(Heading("Judge scores"))
    judge = plots.plot_judge(rows, out_dir / "judge_scores.png", names)
    figure(judge, "LLM-as-judge scores (MMDocRAG, 0-5)")
    if judge is None:
        notes = sorted({r.note.removeprefix(f"{NOT_COMPUTED}: ") for r in rows if r.metric.startswith(JUDGE_PREFIX)})
        reason = f" ({'; '.join(n for n in notes if n)})" if any(notes) else " (no judge configured)"
        blocks.append(Para(f"Judge metrics: {NOT_COMPUTED}{reason}."))

    titles = {"retriever": "By retriever", "position": "By context position"}
    breakdowns = [b for b in dict.fromkeys(r.breakdown for r in rows) if b != "all"]
    breakdowns.sort(key=lambda b: b in titles)  # question slices first, retrievers and positions last
    for name in breakdowns:
        tables = _pivots(rows, name, names)
        if tables:
            blocks += [Heading(titles.get(name, f"By {name.replace('_', ' ')}")), *tables]
    return blocks, pngs


def write_report(
    rows: Sequence[MetricRow],
    out_dir: str | Path,
    title: str = "Interleaf evaluation",
    names: Mapping[str, str] | None = None,
) -> tuple[Path, Path, list[Path]]:
    """report.md (PNGs beside it), report.html (self-contained) and eval_metrics.jsonl in `out_dir`.
    `names`: question set id -> what to call it (its question file's name)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocks, pngs = _build(rows, out, title, names)
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(to_markdown(blocks, out), encoding="utf-8")
    html_path.write_text(to_html(blocks, title), encoding="utf-8")
    write_rows(rows, out / "eval_metrics.jsonl")
    return md_path, html_path, pngs
