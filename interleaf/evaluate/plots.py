"""The report's PNG plots (matplotlib, Agg: no display, no pyplot state). Each returns None when the rows
hold no data for it, so the report shows plots only for what was computed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure

from interleaf.evaluate.breakdowns import natural_key
from interleaf.evaluate.report import MetricRow

RECALL = re.compile(r"^recall@(\d+)$")
JUDGE_PREFIX = "judge_"


def _series_label(row: MetricRow, *parts: str) -> str:
    return " / ".join(p for p in (row.qset, row.variant, row.scope, *parts) if p and p != "all")


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def plot_recall(rows: Sequence[MetricRow], path: Path) -> Path | None:
    """Recall@k against k: one line per retriever (breakdown "retriever") or per run variant and scope."""
    series: dict[str, dict[int, float]] = {}
    for row in rows:
        match = RECALL.match(row.metric)
        if match is None or row.value is None or row.breakdown not in ("all", "retriever"):
            continue
        label = _series_label(row, row.group if row.breakdown == "retriever" else "")
        series.setdefault(label or "all", {})[int(match[1])] = row.value
    if not series:
        return None
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    for label, points in sorted(series.items()):
        ks = sorted(points)
        ax.plot(ks, [points[k] for k in ks], marker="o", label=label)
    ax.set_xlabel("k (context budget)")
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Retrieval recall@k")
    return _save(fig, path)


def plot_groups(rows: Sequence[MetricRow], metric: str, breakdown: str, path: Path, title: str) -> Path | None:
    """One metric by group (e.g. quote_f1 by question_type): grouped bars, one colour per run variant."""
    chosen = [r for r in rows if r.metric == metric and r.breakdown == breakdown and r.value is not None]
    if not chosen:
        return None
    groups = sorted({r.group for r in chosen}, key=natural_key)
    fig = Figure(figsize=(max(5.0, 0.9 * len(groups) + 2), 3.8))
    ax = fig.subplots()
    _grouped_bars(ax, chosen, groups, lambda r: r.group, groups)
    ax.set_ylabel(metric)
    ax.set_title(title)
    return _save(fig, path)


def _grouped_bars(
    ax: Any,
    rows: Sequence[MetricRow],
    categories: Sequence[str],
    category_of: Callable[[MetricRow], str],
    tick_labels: Sequence[str],
) -> None:
    """One bar per category and run variant, variants side by side, a legend when there are several."""
    labels = sorted({_series_label(r) or "all" for r in rows})
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        values = {category_of(r): r.value for r in rows if (_series_label(r) or "all") == label}
        xs = [c + i * width - 0.4 + width / 2 for c in range(len(categories))]
        ax.bar(xs, [values.get(c) or 0.0 for c in categories], width=width, label=label)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(tick_labels, rotation=30, ha="right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if len(labels) > 1:
        ax.legend(fontsize=7)


def plot_positions(rows: Sequence[MetricRow], path: Path) -> Path | None:
    """Selection rate of gold quotes by context position (MMDocRAG Figure 8)."""
    chosen = [r for r in rows if r.metric == "selection_rate" and r.breakdown == "position" and r.value is not None]
    if not chosen:
        return None
    labels = sorted({_series_label(r) or "all" for r in chosen})
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.subplots()
    for label in labels:
        points = sorted((int(r.group), r.value) for r in chosen if (_series_label(r) or "all") == label)
        ax.plot([p for p, _ in points], [v for _, v in points], marker="o", label=label)
    ax.set_xlabel("position of the gold quote in the context")
    ax.set_ylabel("share cited")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if len(labels) > 1:
        ax.legend(fontsize=7)
    ax.set_title("Quote selection by context position")
    return _save(fig, path)


def plot_judge(rows: Sequence[MetricRow], path: Path) -> Path | None:
    """MMDocRAG's five judge criteria and their mean (0-5), per run variant."""
    chosen = [r for r in rows if r.metric.startswith(JUDGE_PREFIX) and r.breakdown == "all" and r.value is not None]
    if not chosen:
        return None
    criteria = list(dict.fromkeys(r.metric for r in chosen))
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    _grouped_bars(ax, chosen, criteria, lambda r: r.metric, [c.removeprefix(JUDGE_PREFIX) for c in criteria])
    ax.set_ylim(0, 5)
    ax.set_ylabel("score (0-5)")
    ax.set_title("LLM-as-judge scores")
    return _save(fig, path)
