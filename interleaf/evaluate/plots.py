"""The report's PNG plots (matplotlib, Agg: no display, no pyplot state). Each returns None when the rows
hold no data for it, so the report shows plots only for what was computed.

For a reader: legends name the question file and scope (`slice_label`), never a hash; every plotted
value carries its n (a label on each bar and on each point whose series' n varies, else in the
series' legend entry); a value over fewer than MIN_N items is drawn as a hollow mark with its n,
not as a bar or a connected point, so one question cannot make a spike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from interleaf.evaluate.breakdowns import natural_key
from interleaf.evaluate.metric_rows import MetricRow, slice_label
from interleaf.evaluate.report import MIN_N, TOO_FEW

RECALL = re.compile(r"^recall@(\d+)$")
JUDGE_PREFIX = "judge_"
Names = Mapping[str, str] | None
_FEW = {"fillstyle": "none", "linestyle": "none", "markersize": 7}


def _series_label(row: MetricRow, names: Names, *parts: str) -> str:
    return " · ".join(p for p in (*parts, slice_label(row, names)) if p and p != "all")


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _legend(ax: Any, few: bool, **where: Any) -> None:
    """The slices' legend, with one entry for the hollow marks when a plot has any."""
    handles, labels = ax.get_legend_handles_labels()
    if few:
        handles.append(Line2D([], [], marker="o", color="#666", **_FEW))
        labels.append(f"hollow {TOO_FEW}: n < {MIN_N}, too few to read")
    if handles:
        ax.legend(handles, labels, fontsize=7, **where)


def _lines(ax: Any, series: dict[str, dict[int, MetricRow]]) -> bool:
    """One line per series through its points with n >= MIN_N; points with fewer as hollow marks,
    unconnected. n in the legend when a series has one n, else beside every point. -> any few."""
    few = False
    for label, points in sorted(series.items()):
        xs = sorted(points)
        ns = {points[x].n for x in xs}
        name = f"{label} (n={ns.pop()})" if len(ns) == 1 else label
        enough = [x for x in xs if points[x].n >= MIN_N]
        line = ax.plot(enough, [points[x].value for x in enough], marker="o", label=name)[0]
        lacking = [x for x in xs if points[x].n < MIN_N]
        if lacking:
            few = True
            ax.plot(lacking, [points[x].value for x in lacking], marker="o", color=line.get_color(), **_FEW)
        if len({points[x].n for x in xs}) > 1:
            for x in xs:
                mark = TOO_FEW if points[x].n < MIN_N else ""
                ax.annotate(
                    f"{points[x].n}{mark}", (x, points[x].value), textcoords="offset points", xytext=(0, 5),
                    ha="center", fontsize=6, color=line.get_color(),
                )  # fmt: skip
    return few


def plot_recall(rows: Sequence[MetricRow], path: Path, names: Names = None) -> Path | None:
    fig = recall_figure(rows, names)
    return _save(fig, path) if fig else None


def recall_figure(rows: Sequence[MetricRow], names: Names = None) -> Figure | None:
    """Recall@k against k: one line per retriever (breakdown "retriever") or per question set, scope
    and variant."""
    series: dict[str, dict[int, MetricRow]] = {}
    for row in rows:
        match = RECALL.match(row.metric)
        if match is None or row.value is None or row.breakdown not in ("all", "retriever"):
            continue
        label = _series_label(row, names, row.group if row.breakdown == "retriever" else "all evidence")
        series.setdefault(label, {})[int(match[1])] = row
    if not series:
        return None
    fig = Figure(figsize=(7.2, 4.2))
    ax = fig.subplots()
    few = _lines(ax, series)
    ax.set_xlabel("k (context budget)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1.08)
    ax.grid(alpha=0.3)
    _legend(ax, few, loc="lower right")
    ax.set_title("Retrieval recall@k")
    return fig


def plot_groups(
    rows: Sequence[MetricRow], metric: str, breakdown: str, path: Path, title: str, names: Names = None
) -> Path | None:
    fig = groups_figure(rows, metric, breakdown, title, names)
    return _save(fig, path) if fig else None


def groups_figure(
    rows: Sequence[MetricRow], metric: str, breakdown: str, title: str, names: Names = None
) -> Figure | None:
    """One metric by group (e.g. quote_f1 by question_type): grouped bars, one colour per slice."""
    chosen = [r for r in rows if r.metric == metric and r.breakdown == breakdown and r.value is not None]
    if not chosen:
        return None
    groups = sorted({r.group for r in chosen}, key=natural_key)
    fig = Figure(figsize=(max(5.5, 1.0 * len(groups) + 2.5), 4.0))
    ax = fig.subplots()
    _grouped_bars(ax, chosen, groups, lambda r: r.group, groups, names)
    ax.set_ylabel(metric)
    ax.set_title(title)
    return fig


def _grouped_bars(
    ax: Any,
    rows: Sequence[MetricRow],
    categories: Sequence[str],
    category_of: Callable[[MetricRow], str],
    tick_labels: Sequence[str],
    names: Names,
) -> None:
    """One bar per category and slice, slices side by side, its n above it; a value over fewer than
    MIN_N items is a hollow mark with its n, not a bar. A legend when there are several slices."""
    labels = sorted({_series_label(r, names) for r in rows})
    width = 0.8 / len(labels)
    few = False
    top = max((r.value or 0.0) for r in rows)
    for i, label in enumerate(labels):
        found = {category_of(r): r for r in rows if _series_label(r, names) == label}
        xs = {c: j + i * width - 0.4 + width / 2 for j, c in enumerate(categories)}
        solid = [c for c in categories if c in found and found[c].n >= MIN_N]
        bars = ax.bar([xs[c] for c in solid], [found[c].value for c in solid], width=width, label=label)
        colour = bars.patches[0].get_facecolor() if bars.patches else None
        lacking = [c for c in categories if c in found and found[c].n < MIN_N]
        if lacking:
            few = True
            ax.plot([xs[c] for c in lacking], [found[c].value for c in lacking], marker="D", color=colour, **_FEW)
        for c in categories:
            if c in found:
                mark = TOO_FEW if found[c].n < MIN_N else ""
                ax.annotate(
                    f"n={found[c].n}{mark}", (xs[c], found[c].value or 0.0), textcoords="offset points",
                    xytext=(0, 7 if mark else 3), ha="center", fontsize=7,
                )  # fmt: skip
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(tick_labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, max(1.0, top) * 1.15)
    ax.grid(axis="y", alpha=0.3)
    if len(labels) > 1 or few:
        _legend(ax, few)


def plot_positions(rows: Sequence[MetricRow], path: Path, names: Names = None) -> Path | None:
    fig = positions_figure(rows, names)
    return _save(fig, path) if fig else None


def positions_figure(rows: Sequence[MetricRow], names: Names = None) -> Figure | None:
    """Selection rate of gold quotes by context position (MMDocRAG Figure 8); n: gold quotes there."""
    chosen = [r for r in rows if r.metric == "selection_rate" and r.breakdown == "position" and r.value is not None]
    if not chosen:
        return None
    series: dict[str, dict[int, MetricRow]] = {}
    for r in chosen:
        series.setdefault(_series_label(r, names), {})[int(r.group)] = r
    fig = Figure(figsize=(7.2, 3.9))
    ax = fig.subplots()
    few = _lines(ax, series)
    ax.set_xlabel("position of the gold quote in the context")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("share cited")
    ax.set_ylim(0, 1.12)
    ax.grid(alpha=0.3)
    _legend(ax, few)
    ax.set_title("Quote selection by context position")
    return fig


def plot_judge(rows: Sequence[MetricRow], path: Path, names: Names = None) -> Path | None:
    fig = judge_figure(rows, names)
    return _save(fig, path) if fig else None


def judge_figure(rows: Sequence[MetricRow], names: Names = None) -> Figure | None:
    """MMDocRAG's five judge criteria and their mean (0-5), per slice."""
    chosen = [r for r in rows if r.metric.startswith(JUDGE_PREFIX) and r.breakdown == "all" and r.value is not None]
    if not chosen:
        return None
    criteria = list(dict.fromkeys(r.metric for r in chosen))
    fig = Figure(figsize=(7.2, 4.0))
    ax = fig.subplots()
    _grouped_bars(ax, chosen, criteria, lambda r: r.metric, [c.removeprefix(JUDGE_PREFIX) for c in criteria], names)
    ax.set_ylim(0, 5.6)
    ax.set_ylabel("score (0-5)")
    ax.set_title("LLM-as-judge scores")
    return fig
