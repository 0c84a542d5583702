"""`make faults`, disk full while writing, at CI size: an ingest that runs out of room (on a small
tmpfs in a private mount namespace, or with ENOSPC injected at the write where mounting is
refused) fails with one line naming the file and "No space left on device", leaves the published
snapshot exactly as it was and readable (`sql`, `ask`), and its rerun with room ends as an
undisturbed ingest."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults import disk_full
from benchmarks.faults.common import FaultContext


@pytest.mark.slow
def test_full_disk_is_a_clear_error_and_the_snapshot_survives(tmp_path: Path, corpus: Path) -> None:
    outcome = disk_full.run(FaultContext(corpus, tmp_path, "ci"))
    print(f"{outcome.fault}: {outcome.survived}/{outcome.cases} survived, {outcome.rows_lost} rows lost")
    print(outcome.detail)
    assert outcome.cases == len(disk_full.SIZES["ci"])
    assert outcome.ok, outcome.failures
    # the crop case ran out on an image, the publish case on the published state
    assert "crop image: ran out at images/" in outcome.detail, outcome.detail
    assert f"publish: ran out at {disk_full.PUBLISH}" in outcome.detail, outcome.detail
