"""The regression gate: `interleaf eval --compare RUN_A RUN_B` fails CI when a gated metric drops by more
than its margin, or cannot be compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleaf.evaluate.compare import compare, render_compare
from interleaf.evaluate.report import MetricRow, read_rows, write_rows


def row(run: str, metric: str, value: float | None, scope: str = "doc", **kw: str) -> MetricRow:
    return MetricRow(run, "qa_dev", "full", scope, metric, value=value, n=47, **kw)


def test_a_drop_larger_than_the_margin_fails() -> None:
    result = compare([row("a", "quote_f1", 0.60)], [row("b", "quote_f1", 0.55)], {"quote_f1": 0.02})
    [diff] = result.rows
    assert diff.status == "regressed" and diff.failed
    assert result.failed == [diff] and not result.passed and result.exit_code == 1
    assert diff.delta == pytest.approx(-0.05)


def test_a_drop_equal_to_or_below_the_margin_passes() -> None:
    # 0.50 - 0.48 is 0.020000000000000018 in binary: still "equal to the margin"
    equal = compare([row("a", "quote_f1", 0.50)], [row("b", "quote_f1", 0.48)], {"quote_f1": 0.02})
    assert equal.passed and equal.exit_code == 0
    assert equal.rows[0].status == "dropped" and not equal.rows[0].failed
    below = compare([row("a", "quote_f1", 0.50)], [row("b", "quote_f1", 0.495)], {"quote_f1": 0.02})
    assert below.passed


def test_improvements_and_unchanged_values_pass() -> None:
    a = [row("a", "quote_f1", 0.50), row("a", "recall@10", 0.90)]
    b = [row("b", "quote_f1", 0.70), row("b", "recall@10", 0.90)]
    result = compare(a, b, {"quote_f1": 0.0, "recall@10": 0.0})
    assert result.passed
    assert [(d.metric, d.status) for d in result.rows] == [("quote_f1", "improved"), ("recall@10", "ok")]


def test_a_gated_metric_missing_from_either_run_fails_and_is_reported() -> None:
    a = [row("a", "quote_f1", 0.5), row("a", "bleu", 0.2)]
    b = [row("b", "bleu", 0.2), row("b", "rouge_l", 0.3)]
    result = compare(a, b, {"quote_f1": 0.01, "rouge_l": 0.01})
    status = {d.metric: (d.status, d.failed) for d in result.rows}
    assert status == {
        "quote_f1": ("missing in B", True),
        "rouge_l": ("missing in A", True),
        "bleu": ("ok", False),
    }
    assert result.exit_code == 1
    text = render_compare(result)
    assert "FAIL: missing in B" in text and "FAIL: missing in A" in text
    assert text.splitlines()[-1] == "gate: FAIL (2 gated)"


def test_an_ungated_metric_may_drop_or_vanish_without_failing() -> None:
    a = [row("a", "bleu", 0.30), row("a", "sacrebleu", 12.0)]
    b = [row("b", "bleu", 0.10)]
    result = compare(a, b, {})
    assert result.passed
    assert {d.metric: d.status for d in result.rows} == {"bleu": "dropped", "sacrebleu": "missing in B"}


def test_a_gated_metric_not_computed_fails() -> None:
    a = [row("a", "judge_mean", 3.5)]
    b = [row("b", "judge_mean", None, note="no judge configured")]
    result = compare(a, b, {"judge_mean": 0.2})
    assert result.rows[0].status == "not computed" and not result.passed


def test_a_gate_naming_a_metric_neither_run_has_fails() -> None:
    result = compare([row("a", "quote_f1", 0.5)], [row("b", "quote_f1", 0.5)], {"quote_f1_typo": 0.01})
    assert result.unmatched_gates == ["quote_f1_typo"] and result.exit_code == 1
    assert "FAIL: gated metric quote_f1_typo is in neither run" in render_compare(result)


def test_rows_pair_by_scope_and_breakdowns_count_only_when_asked() -> None:
    a = [
        row("a", "recall@10", 0.90, scope="doc"),
        row("a", "recall@10", 0.80, scope="corpus"),
        row("a", "quote_f1", 0.9, breakdown="question_type", group="Comparative"),
    ]
    b = [
        row("b", "recall@10", 0.90, scope="doc"),
        row("b", "recall@10", 0.70, scope="corpus"),  # corpus drops 0.10, doc holds
        row("b", "quote_f1", 0.1, breakdown="question_type", group="Comparative"),
    ]
    headline = compare(a, b, {"recall@10": 0.05, "quote_f1": 0.05})
    assert [(d.key[2], d.status) for d in headline.rows] == [("corpus", "regressed"), ("doc", "ok")]
    assert headline.unmatched_gates == ["quote_f1"]  # only in a breakdown, and breakdowns were not compared
    sliced = compare(a, b, {"quote_f1": 0.05}, breakdowns=("question_type",))
    assert [(d.key[5], d.status) for d in sliced.rows] == [("Comparative", "regressed")]


def test_gate_from_report_files_as_ci_runs_it(tmp_path: Path) -> None:
    a = write_rows([row("run-a", "quote_f1", 0.62), row("run-a", "recall@20", 0.98)], tmp_path / "a.jsonl")
    b = write_rows([row("run-b", "quote_f1", 0.64), row("run-b", "recall@20", 0.93)], tmp_path / "b.jsonl")
    result = compare(read_rows(a), read_rows(b), {"quote_f1": 0.02, "recall@20": 0.02})
    assert [d.metric for d in result.failed] == ["recall@20"]
    table = render_compare(result, run_a="run-a", run_b="run-b")
    header, _, *body, verdict = table.splitlines()
    assert " ".join(header.split()) == "qset variant scope metric group run-a run-b delta margin status"
    assert " ".join(body[0].split()) == "qa_dev full doc quote_f1 all 0.620 0.640 +0.020 0.020 improved"
    assert " ".join(body[1].split()) == "qa_dev full doc recall@20 all 0.980 0.930 -0.050 0.020 FAIL: regressed"
    assert verdict == "gate: FAIL (1 gated)"


def test_a_negative_margin_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        compare([], [], {"quote_f1": -0.1})


def test_runs_measured_by_different_code_are_named_and_still_gated() -> None:
    # a gold value found only whole moved answer_correct with no answer changed: the comparison says
    # the two runs were measured apart, and a drop past the margin still fails
    a = [row("a", "answer_correct", 0.24, measured_by="1111aaaa")]
    b = [row("b", "answer_correct", 0.18, measured_by="2222bbbb")]
    result = compare(a, b, {"answer_correct": 0.02})
    assert result.measured_apart and not result.passed
    text = render_compare(result)
    assert "A and B were measured by different code (A: 1111aaaa; B: 2222bbbb)" in text, text
    # one code, or rows stored before the code was kept on both sides: no note
    same = compare(a, [row("b", "answer_correct", 0.24, measured_by="1111aaaa")], {"answer_correct": 0.02})
    assert not same.measured_apart and "measured by" not in render_compare(same)
    unrecorded = compare([row("a", "answer_correct", 0.2)], [row("b", "answer_correct", 0.2)], {})
    assert not unrecorded.measured_apart
    # kept on one side only: named as not recorded
    older = compare([row("a", "answer_correct", 0.2)], b, {})
    assert older.measured_apart and "(A: not recorded; B: 2222bbbb)" in render_compare(older)
