"""Ctrl-C, SIGTERM and kill -9 of an ingest: a quick exit with one line, no running ledger rows, no
process left behind, and a rerun that ends as an uninterrupted ingest would."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import IngestedWarehouse, run_cli, sql_rows
from tests.test_rerun import _spawn_ingest, contents

DOCS = ["figures-example.pdf", "reliance-overview.pdf", "cyber-leadership-brief.pdf"]


@pytest.fixture(scope="module")
def files(corpus: Path) -> list[str]:
    return [str(corpus / "docs" / name) for name in DOCS]


def _started(root: Path, proc: subprocess.Popen[str]) -> list[psutil.Process]:
    """Once the first parse unit runs (its ledger row is written): every process the command started."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not list(root.glob("runs/ledger/*__parse__*")):
        time.sleep(0.05)
    assert proc.poll() is None, f"the ingest ended before it could be stopped: {proc.communicate()}"
    time.sleep(1.0)  # the page workers are at work
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children, "the ingest started no process (page workers, Prefect's server)"
    return children


def _alive(processes: list[psutil.Process], root: Path, within_s: float) -> list[str]:
    """The processes seen running under the command, and any started later (they inherit its
    environment, so its warehouse), that are still alive after `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        left = {p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}
        for p in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if p.environ().get("INTERLEAF_WAREHOUSE") == str(root) and p.status() != psutil.STATUS_ZOMBIE:
                    left.add(p)
        if not left or time.monotonic() > deadline:
            return [" ".join(p.cmdline()[:4]) for p in left if p.is_running()]
        time.sleep(0.1)


def _group_alive(pgid: int) -> list[int]:
    found = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(p.info["pid"]) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p.info["pid"])
        except ProcessLookupError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_ingest_cleanly_and_rerun_resumes(
    tmp_path: Path, files: list[str], sig: signal.Signals, corpus_warehouse: IngestedWarehouse
) -> None:
    root = tmp_path / "warehouse"
    proc = _spawn_ingest(root, files, own_server=True)
    try:
        children = _started(root, proc)
        sent = time.monotonic()
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=10)
        seconds = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert seconds < 10
    assert "Traceback" not in err and "Crash detected" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(lines) == 1 and " kept" in lines[0] and "run the same command again" in lines[0], err
    print(f"{sig.name}: exit {proc.returncode} {seconds:.1f} s after the signal; {lines[0]}")
    assert _alive(children, root, within_s=5) == []
    assert _group_alive(proc.pid) == []

    statuses = {r["status"] for r in sql_rows(root, "select distinct status from runs")}
    assert "running" not in statuses and statuses & {"interrupted", "ok"}, statuses

    if sig == signal.SIGINT:  # the rerun: once is enough to show it resumes to the same tables
        rerun = run_cli(root, "ingest", *files)
        assert "0 failed" in rerun.stdout
        # the reference: the same documents in the warehouse of docs/, ingested without a stop
        assert contents(root) == contents(corpus_warehouse.root, DOCS)


def test_kill_9_takes_its_children_and_the_next_start_closes_its_rows(tmp_path: Path, files: list[str]) -> None:
    root = tmp_path / "warehouse"
    proc = _spawn_ingest(root, files, own_server=True)
    try:
        children = _started(root, proc)
        os.kill(proc.pid, signal.SIGKILL)  # the command alone: its children must follow by themselves
        proc.wait(timeout=10)
        assert _alive(children, root, within_s=5) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert sql_rows(root, "select count(*) n from runs where status = 'running'")[0]["n"] > 0
    run_cli(root, "runs")  # a command start closes the rows of a process that is gone
    rows = sql_rows(root, f"select status, ended_at from runs where pid = {proc.pid}")
    assert rows and all(r["status"] != "running" and r["ended_at"] for r in rows), rows
    assert "interrupted" in {r["status"] for r in rows}
