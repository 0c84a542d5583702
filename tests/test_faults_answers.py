"""`make faults`, answers during an ingest, at CI size: 4 `ask` calls in waves while an ingest adds
documents; each answer is snapshot A's or snapshot B's exactly, its context within that snapshot,
and no row of snapshot A's views is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults.answers_during_ingest import CALLS, run_asked
from benchmarks.faults.common import FaultContext


@pytest.mark.slow
def test_every_answer_during_an_ingest_is_one_snapshots(corpus: Path, tmp_path: Path) -> None:
    outcome, asked, ingest_s = run_asked(FaultContext(corpus, tmp_path, "ci"))
    print(outcome.detail)
    assert outcome.cases == CALLS["ci"] == len(asked)
    assert outcome.ok, outcome.failures
    assert all(a.returncode == 0 and a.answer and a.answer["context"] for a in asked)
    # the calls were spread over the ingest: the first wave began while it ran
    assert min(a.started_s for a in asked) < ingest_s
