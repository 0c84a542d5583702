"""Two runs' metrics side by side, and a regression gate for CI.

`compare(rows_a, rows_b, gate)` pairs the rows of run A (the baseline) and run B (the candidate) by
question set, variant, scope, metric, breakdown and group. A gated metric fails when it drops from A to B
by more than its margin (absolute, in the metric's own units; every gated metric is one where higher is
better), and when it cannot be compared: missing from either run, or not computed in either. A gate that
names a metric neither run has fails too, so a renamed metric cannot pass CI silently.

Each stored row keeps the digest of the code that measured it (`measured_by`); where A's and B's
differ, the table is followed by a note saying so: a value may then have moved with the measure (a
gold value found only whole, a new tolerance), not with the answers. The gate is applied all the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from interleaf.evaluate.report import MetricRow, format_value, text_table

# Float noise must not turn a drop equal to the margin into a failure (0.50 - 0.48 > 0.02 in binary).
_EPSILON = 1e-9

Status = Literal["ok", "improved", "dropped", "regressed", "missing in A", "missing in B", "not computed"]


@dataclass(frozen=True)
class MetricDiff:
    key: tuple[str, str, str, str, str, str]  # qset, variant, scope, metric, breakdown, group
    a: float | None
    b: float | None
    margin: float | None  # the gate's margin; None: not gated
    status: Status
    failed: bool

    @property
    def metric(self) -> str:
        return self.key[3]

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class CompareResult:
    rows: list[MetricDiff]  # every paired row, gated or not
    failed: list[MetricDiff]  # the gated rows that fail
    unmatched_gates: list[str]  # gated metrics found in neither run (each is a failure)
    measured_by: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())  # A's and B's ("": not kept)

    @property
    def measured_apart(self) -> bool:
        """A and B were measured by different code, or one of them by code not recorded."""
        a, b = self.measured_by
        return bool(a and b) and a != b

    @property
    def passed(self) -> bool:
        return not self.failed and not self.unmatched_gates

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def _status(a: MetricRow | None, b: MetricRow | None, margin: float | None) -> tuple[Status, bool]:
    gated = margin is not None
    if a is None:
        return "missing in A", gated
    if b is None:
        return "missing in B", gated
    if a.value is None or b.value is None:
        return "not computed", gated
    drop = a.value - b.value
    if drop < -_EPSILON:
        return "improved", False
    if drop <= _EPSILON:
        return "ok", False
    if gated and drop - margin > _EPSILON:
        return "regressed", True
    return "dropped", False


def compare(
    rows_a: Sequence[MetricRow],
    rows_b: Sequence[MetricRow],
    gate: Mapping[str, float],
    breakdowns: Sequence[str] = ("all",),
) -> CompareResult:
    """Pair A's and B's rows of the given breakdowns; gate[metric] is the largest allowed drop."""
    for metric, margin in gate.items():
        if margin < 0:
            raise ValueError(f"gate margin for {metric} is negative: {margin}")
    by_key_a = {r.key: r for r in rows_a if r.breakdown in breakdowns}
    by_key_b = {r.key: r for r in rows_b if r.breakdown in breakdowns}
    diffs = []
    for key in sorted(by_key_a.keys() | by_key_b.keys()):
        a, b = by_key_a.get(key), by_key_b.get(key)
        margin = gate.get(key[3])
        status, failed = _status(a, b, margin)
        diffs.append(MetricDiff(key, a.value if a else None, b.value if b else None, margin, status, failed))
    seen = {d.metric for d in diffs}
    measured_a = frozenset(r.measured_by for r in by_key_a.values())
    measured_b = frozenset(r.measured_by for r in by_key_b.values())
    unmatched = sorted(m for m in gate if m not in seen)
    return CompareResult(diffs, [d for d in diffs if d.failed], unmatched, (measured_a, measured_b))


def render_compare(result: CompareResult, only_gated: bool = False, run_a: str = "A", run_b: str = "B") -> str:
    """The difference table as plain text, failures marked, and a last line saying pass or fail."""
    header = ["qset", "variant", "scope", "metric", "group", run_a, run_b, "delta", "margin", "status"]
    body = []
    for d in result.rows:
        if only_gated and d.margin is None:
            continue
        qset, variant, scope, metric, breakdown, group = d.key
        body.append(
            [
                qset,
                variant,
                scope,
                metric,
                group if breakdown == "all" else f"{breakdown}={group}",
                "-" if d.a is None and d.status == "missing in A" else format_value(d.a),
                "-" if d.b is None and d.status == "missing in B" else format_value(d.b),
                "" if d.delta is None else f"{d.delta:+.3f}",
                "" if d.margin is None else f"{d.margin:.3f}",
                ("FAIL: " if d.failed else "") + d.status,
            ]
        )
    lines = [text_table(header, body)]
    for metric in result.unmatched_gates:
        lines.append(f"FAIL: gated metric {metric} is in neither run")
    if result.measured_apart:
        a, b = (", ".join(sorted(c or "not recorded" for c in m)) for m in result.measured_by)
        lines.append(
            f"note: {run_a} and {run_b} were measured by different code ({run_a}: {a}; {run_b}: {b}): a value "
            "may have moved with how it is measured, not with the answers"
        )
    verdict = "PASS" if result.passed else f"FAIL ({len(result.failed) + len(result.unmatched_gates)} gated)"
    lines.append(f"gate: {verdict}")
    return "\n".join(lines)
