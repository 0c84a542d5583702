"""Evaluation rows and the report made of them.

Every metric an eval run computes becomes one `MetricRow` (the proposed `eval_metrics` table: run,
question set, variant, scope, metric, breakdown and group, value, n, note). A value of None means "not
computed" (no judge configured, no data), never zero. `write_report` turns a run's rows into Markdown
and a self-contained HTML page (PNG plots inlined as data URLs), plus the rows as JSON lines.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from interleaf.evaluate.breakdowns import PositionSelection, natural_key

# Metrics the headline table shows, in this order, where a run has them (breakdown "all").
HEADLINE_METRICS = (
    "recall@5",
    "recall@10",
    "recall@15",
    "recall@20",
    "quote_f1",
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
NOT_COMPUTED = "not computed"


class MetricLike(Protocol):
    """What the metric functions return (interleaf.evaluate.metrics.records.MetricValue)."""

    @property
    def name(self) -> str: ...
    @property
    def value(self) -> float | None: ...
    @property
    def n(self) -> int: ...
    @property
    def note(self) -> str: ...


@dataclass(frozen=True)
class MetricRow:
    run_id: str
    qset: str  # the question set: qa_dev, mmdocrag:evaluation_20, ...
    variant: str  # full, or an ablation's name
    scope: str  # doc, corpus, fixed (MMDocRAG's given context)
    metric: str  # recall@10, quote_f1, bleu, judge_fluency, selection_rate, ...
    breakdown: str = "all"  # all, question_type, evidence_type, page_span, modality_span, document, position, ...
    group: str = "all"  # the group within the breakdown: Comparative, cross-page, 7, ...
    value: float | None = None  # None: not computed
    n: int = 0  # what the value averages over (questions, evidence items, gold quotes: the note says)
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        """What identifies a row across runs (everything but the run, the value and its n / note)."""
        return (self.qset, self.variant, self.scope, self.metric, self.breakdown, self.group)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> MetricRow:
        value = raw.get("value")
        return cls(
            run_id=str(raw["run_id"]),
            qset=str(raw["qset"]),
            variant=str(raw["variant"]),
            scope=str(raw["scope"]),
            metric=str(raw["metric"]),
            breakdown=str(raw.get("breakdown") or "all"),
            group=str(raw.get("group") or "all"),
            value=None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value),
            n=int(raw.get("n") or 0),
            note=str(raw.get("note") or ""),
        )


def rows_from_values(
    values: Iterable[MetricLike],
    *,
    run_id: str,
    qset: str,
    variant: str,
    scope: str,
    breakdown: str = "all",
    group: str = "all",
) -> list[MetricRow]:
    return [MetricRow(run_id, qset, variant, scope, v.name, breakdown, group, v.value, v.n, v.note) for v in values]


def rows_from_breakdown(
    groups: Mapping[str, Iterable[MetricLike]], *, breakdown: str, run_id: str, qset: str, variant: str, scope: str
) -> list[MetricRow]:
    """The result of `breakdown(records, key, metric_fn)` where metric_fn returns a list of metric values."""
    return [
        row
        for group, values in groups.items()
        for row in rows_from_values(
            values, run_id=run_id, qset=qset, variant=variant, scope=scope, breakdown=breakdown, group=group
        )
    ]


def rows_from_positions(
    positions: Iterable[PositionSelection], *, run_id: str, qset: str, variant: str, scope: str
) -> list[MetricRow]:
    """`selection_rate` by `position`; positions no gold quote took have no row."""
    return [
        MetricRow(
            run_id, qset, variant, scope, "selection_rate", "position", str(p.position), p.rate, p.gold,
            f"{p.cited} of {p.gold} gold quotes at this position cited",
        )
        for p in positions
        if p.gold
    ]  # fmt: skip


def write_rows(rows: Iterable[MetricRow], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def read_rows(path: str | Path) -> list[MetricRow]:
    return [MetricRow.from_json(json.loads(line)) for line in Path(path).read_text("utf-8").splitlines() if line]


def format_value(value: float | None) -> str:
    return NOT_COMPUTED if value is None else f"{value:.3f}"


# -- the headline table -------------------------------------------------------------------------------


def headline_rows(rows: Sequence[MetricRow], metrics: Sequence[str] = HEADLINE_METRICS) -> list[MetricRow]:
    order = {m: i for i, m in enumerate(metrics)}
    chosen = [r for r in rows if r.breakdown == "all" and r.metric in order]
    return sorted(chosen, key=lambda r: (r.qset, r.variant, r.scope, order[r.metric]))


def text_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(line[i]) for line in body)) if body else len(h) for i, h in enumerate(header)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_headline(rows: Sequence[MetricRow], metrics: Sequence[str] = HEADLINE_METRICS) -> str:
    """The headline metrics as a plain-text table, for the terminal."""
    body = [
        [r.qset, r.variant, r.scope, r.metric, format_value(r.value), str(r.n), r.note if r.value is None else ""]
        for r in headline_rows(rows, metrics)
    ]
    return text_table(["qset", "variant", "scope", "metric", "value", "n", "note"], body)


# -- the report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class _Para:
    text: str


@dataclass(frozen=True)
class _Table:
    header: tuple[str, ...]
    body: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class _Image:
    path: Path
    caption: str


_Block = _Heading | _Para | _Table | _Image


def _pivot(rows: Sequence[MetricRow], breakdown: str) -> list[_Block]:
    """One table per run slice: groups down, metrics across, each cell the value (n)."""
    blocks: list[_Block] = []
    slices = sorted({(r.qset, r.variant, r.scope) for r in rows if r.breakdown == breakdown})
    for qset, variant, scope in slices:
        chosen = [
            r for r in rows if r.breakdown == breakdown and (r.qset, r.variant, r.scope) == (qset, variant, scope)
        ]
        metrics = list(dict.fromkeys(r.metric for r in chosen))
        groups = sorted({r.group for r in chosen}, key=natural_key)
        cell = {(r.group, r.metric): f"{format_value(r.value)} ({r.n})" for r in chosen}
        body = tuple((g, *(cell.get((g, m), "") for m in metrics)) for g in groups)
        blocks += [_Para(f"{qset} · {variant} · {scope}"), _Table((breakdown, *metrics), body)]
    return blocks


def _build(rows: Sequence[MetricRow], out_dir: Path, title: str) -> tuple[list[_Block], list[Path]]:
    from interleaf.evaluate import plots  # matplotlib costs ~1 s to import: only reports pay it

    pngs: list[Path] = []
    runs = ", ".join(sorted({r.run_id for r in rows})) or "none"
    blocks: list[_Block] = [
        _Heading(title, 1),
        _Para(
            f"Runs: {runs}. Judge scores are 0-5, other values are shares in [0, 1]; 'not computed' is no value, not 0."
        ),
    ]

    heads = headline_rows(rows)
    blocks.append(_Heading("Headline"))
    if heads:
        body = tuple((r.qset, r.variant, r.scope, r.metric, format_value(r.value), str(r.n), r.note) for r in heads)
        blocks.append(_Table(("qset", "variant", "scope", "metric", "value", "n", "note"), body))
    else:
        blocks.append(_Para("No headline metric was computed."))

    def figure(path: Path | None, caption: str) -> None:
        if path is not None:
            pngs.append(path)
            blocks.append(_Image(path, caption))

    blocks.append(_Heading("Retrieval"))
    recall = plots.plot_recall(rows, out_dir / "recall_at_k.png")
    figure(recall, "Recall@k per retriever / variant")
    if recall is None:
        blocks.append(_Para("Retrieval recall: not computed in this run."))

    blocks.append(_Heading("Quote selection"))
    f1 = plots.plot_groups(
        rows,
        "quote_f1",
        "question_type",
        out_dir / "quote_f1_by_question_type.png",
        "Quote selection F1 by question type",
    )
    figure(f1, "Quote selection F1 by question type")
    positions = plots.plot_positions(rows, out_dir / "selection_by_position.png")
    figure(positions, "Share of gold quotes cited, by their position in the context (MMDocRAG §4.6)")
    if f1 is None and positions is None:
        blocks.append(_Para("Quote selection: not computed in this run."))

    blocks.append(_Heading("Judge scores"))
    judge = plots.plot_judge(rows, out_dir / "judge_scores.png")
    figure(judge, "LLM-as-judge scores (MMDocRAG, 0-5)")
    if judge is None:
        notes = sorted({r.note for r in rows if r.metric.startswith(JUDGE_PREFIX) and r.note})
        reason = f" ({'; '.join(notes)})" if notes else " (no judge configured)"
        blocks.append(_Para(f"Judge metrics: {NOT_COMPUTED}{reason}."))

    titles = {"retriever": "By retriever", "position": "By context position"}
    names = [b for b in dict.fromkeys(r.breakdown for r in rows) if b != "all"]
    names.sort(key=lambda b: b in titles)  # question slices first, retrievers and positions last
    for name in names:
        blocks.append(_Heading(titles.get(name, f"By {name.replace('_', ' ')}")))
        blocks += _pivot(rows, name)
    return blocks, pngs


def _markdown(blocks: Sequence[_Block], out_dir: Path) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, _Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, _Para):
            parts.append(block.text)
        elif isinstance(block, _Table):
            cells = [[c.replace("|", "\\|").replace("\n", " ") for c in line] for line in (block.header, *block.body)]
            lines = ["| " + " | ".join(line) + " |" for line in cells]
            lines.insert(1, "|" + "|".join(" --- " for _ in block.header) + "|")
            parts.append("\n".join(lines))
        else:
            parts.append(f"![{block.caption}]({block.path.relative_to(out_dir).as_posix()})")
    return "\n\n".join(parts) + "\n"


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;"
    "font-size:13px;text-align:left}th{background:#f3f3f3}figure{margin:1em 0}figcaption{font-size:13px;color:#555}"
)


def _html(blocks: Sequence[_Block], title: str) -> str:
    esc = html.escape
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title><style>{_CSS}</style>"
        "</head><body>"
    ]
    for block in blocks:
        if isinstance(block, _Heading):
            parts.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, _Para):
            parts.append(f"<p>{esc(block.text)}</p>")
        elif isinstance(block, _Table):
            head = "".join(f"<th>{esc(c)}</th>" for c in block.header)
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>" for line in block.body)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        else:
            data = base64.b64encode(block.path.read_bytes()).decode("ascii")
            parts.append(
                f"<figure><img alt='{esc(block.caption)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{esc(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(
    rows: Sequence[MetricRow], out_dir: str | Path, title: str = "Interleaf evaluation"
) -> tuple[Path, Path, list[Path]]:
    """report.md (PNGs beside it), report.html (self-contained) and eval_metrics.jsonl in `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocks, pngs = _build(rows, out, title)
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(_markdown(blocks, out), encoding="utf-8")
    html_path.write_text(_html(blocks, title), encoding="utf-8")
    write_rows(rows, out / "eval_metrics.jsonl")
    return md_path, html_path, pngs
