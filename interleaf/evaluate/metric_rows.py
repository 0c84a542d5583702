"""One evaluation value per row: the shape of `eval_metrics` as the report, the gate and the CLI read it.

Every metric an eval run computes becomes one `MetricRow` (run, question set, variant, scope, metric,
breakdown and group, value, n, note). A value of None means "not computed" (no judge configured, no
data), never zero. `slice_label` names a row's slice for a reader: the question file, the scope, and
the variant when it is not the full configuration, not the question set's hash.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.cells import cell_len

from interleaf.evaluate.breakdowns import PositionSelection
from interleaf.stage import source_digest

NOT_COMPUTED = "not computed"
FULL_VARIANT = "full"
# The code that turns contexts and answers into values: changed, it can move a value where no answer
# changed (a gold value found only whole, a new tolerance). Its digest is kept with every stored row
# (`measured_by`), so that `eval --compare` can say when two runs were measured by different code.
# The generate functions the measures call (citation parsing, reading numbers) are not here: a change
# to them changes the answers' fingerprint too, so the answers are no longer the same either.
MEASURES = (
    "interleaf.evaluate.metrics",
    "interleaf.evaluate.answers",
    "interleaf.evaluate.breakdowns",
    "interleaf.evaluate.recall",
    "interleaf.evaluate.mmlongbench",
    "interleaf.evaluate.mmlongbench_rows",
    "interleaf.evaluate.mmdocrag",
    "interleaf.evidence",
    "interleaf.stored_answers",  # how stored answers and citations are read back into records
)


def measured_by() -> str:
    """The digest of MEASURES' sources, as this process reads them."""
    return source_digest(MEASURES)


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
    measured_by: str = ""  # the digest of the code that computed it (MEASURES); "": not recorded

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
            measured_by=str(raw.get("measured_by") or ""),
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


def slice_label(row: MetricRow, names: Mapping[str, str] | None = None) -> str:
    """`qa_dev_answers.jsonl · doc` (`· no-rerank` for an ablation variant): what a legend shows."""
    parts = [(names or {}).get(row.qset, row.qset), row.scope]
    if row.variant != FULL_VARIANT:
        parts.append(row.variant)
    return " · ".join(parts)


def text_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Plain aligned columns: two spaces between them, dashes under the header, no trailing spaces.
    Widths are terminal cells (a CJK character takes two), and a cell of several lines takes as
    many lines, so a SQL value with a newline does not shift the columns after it."""
    rows = [[cell.split("\n") for cell in line] for line in [header, *body]]
    widths = [max(cell_len(part) for row in rows for part in row[i]) for i in range(len(header))]
    lines = []
    for row in rows:
        for k in range(max(len(cell) for cell in row)):
            parts = [cell[k] if k < len(cell) else "" for cell in row]
            lines.append("  ".join(p + " " * (w - cell_len(p)) for p, w in zip(parts, widths, strict=True)).rstrip())
    lines.insert(max(len(cell) for cell in rows[0]), "  ".join("-" * w for w in widths))
    return "\n".join(lines)
