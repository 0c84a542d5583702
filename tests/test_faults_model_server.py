"""`make faults`, the model server down / answering 500 / answering garbage / too slow, at CI size:
describe during `interleaf ingest` (down, a body that is not JSON) and generate during `interleaf
answer` (500) and `interleaf ask` (slower than the timeout), against a real OpenAI-compatible server
on loopback. Each faulted command ends within the bound, exits 1 with one line naming the server
and the reason and no traceback, leaves the views as they were, and once the server is healthy the
same command ends equal to a run against a healthy server from the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults.common import FaultContext
from benchmarks.faults.model_server import BOUND_S, MODES, REASON, run_cases


@pytest.mark.slow
def test_model_server_faults_are_survived(corpus: Path, tmp_path: Path) -> None:
    outcome, results = run_cases(FaultContext(corpus, tmp_path, "ci"))
    for r in results:
        print(f"{r.name}: {r.seconds:.1f} s: {r.error_line}")
    assert outcome.ok, outcome.failures
    covered = {r.name.split()[1] for r in results}
    assert covered | {"wrong_shape"} == set(MODES)  # garbage at CI size: a body that is not JSON
    assert {r.name.split()[0] for r in results} == {"describe", "generate"}
    for r in results:
        mode = r.name.split()[1]
        assert "http://127.0.0.1:" in r.error_line and REASON[mode] in r.error_line, r
        assert r.seconds < BOUND_S
