"""`make faults`, kill -9 of the ingest at CI size: two seeded kills of the whole process group,
each followed by the same command run to completion, which must end as the uninterrupted
reference (no row lost or added), with no ledger row left `running` and nothing of the killed
command alive."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults import kill9
from benchmarks.faults.common import FaultContext


@pytest.mark.slow
def test_kill_9_at_seeded_points_then_rerun_ends_as_the_reference(tmp_path: Path, corpus: Path) -> None:
    outcome = kill9.run(FaultContext(corpus, tmp_path, "ci"))
    print(f"{outcome.fault}: {outcome.survived}/{outcome.cases} survived, {outcome.rows_lost} rows lost")
    print(outcome.detail)
    assert outcome.cases == kill9.KILLS["ci"]
    assert outcome.ok, outcome.failures
    # the kills fell inside the ingest (one by time may miss it on a machine quicker than for the
    # reference; one by files written always lands)
    assert outcome.detail.count("finished first") < outcome.cases, outcome.detail
