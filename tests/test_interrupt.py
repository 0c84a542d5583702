"""Ctrl-C, SIGTERM and kill -9 of an ingest: a quick exit with one line and nothing after it, no
running ledger rows, no process left behind, and a rerun that ends as an uninterrupted ingest would.
The command's temporary Prefect server writes to a log of its own, not to the command's terminal,
and closes its database before it ends. (`benchmarks/repeat_interrupt.py` repeats the stops: what
goes wrong by timing shows in tens of them.)"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from interleaf.runtime import interrupt
from interleaf.runtime.prefect_server import LOGS, TEMPORARY, ServerLog
from tests.conftest import REPO, IngestedWarehouse, run_cli, sql_rows
from tests.support.prefect_home import cli_env
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


def _output(process: psutil.Process) -> set[str]:
    """What `process`'s stdout and stderr are (Linux: its /proc fd links)."""
    return {os.readlink(f"/proc/{process.pid}/fd/{fd}") for fd in (1, 2)}


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
        (server,) = [p for p in children if "uvicorn" in p.cmdline()]
        # its output is a log of its own: what it says as it stops never reaches the terminal
        (log,) = (tmp_path / ".prefect-home" / LOGS).glob("*.log")
        assert _output(server) == {str(log)}
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
    assert "Traceback" not in err and "ERROR" not in err and "Crash detected" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(lines) == 1 and " kept" in lines[0] and "run the same command again" in lines[0], err
    assert err.endswith(lines[0] + "\n"), f"written after the interrupted line: {err.partition(lines[0])[2]!r}"
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


# Starts the temporary server as a command does, says where its output goes, asks it something, and
# ends (the server is stopped at the exit).
_START_ASK_AND_END = """
import os, httpx, psutil
from interleaf.runtime.prefect_server import ensure_prefect_api
ensure_prefect_api()
(server,) = [p for p in psutil.Process().children() if "uvicorn" in p.cmdline()]
print(server.pid, *(os.readlink(f"/proc/{server.pid}/fd/{fd}") for fd in (1, 2)))
httpx.post(os.environ["PREFECT_API_URL"] + "/flow_runs/filter", json={}).raise_for_status()
"""


def test_the_temporary_server_writes_to_its_log_and_closes_its_database_before_it_ends(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "warehouse", own_server=True)
    proc = subprocess.run(
        [sys.executable, "-c", _START_ASK_AND_END], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    pid, out, err = proc.stdout.split()
    home = Path(env["PREFECT_HOME"])
    (log,) = (home / LOGS).glob("*.log")
    assert out == err == str(log)
    assert not psutil.pid_exists(int(pid))
    # its engines were disposed of before it ended: SQLite removes the write-ahead log as the last
    # connection closes, and a server ended with connections open (as uvicorn alone ends) leaves it
    assert (home / "prefect.db").exists()
    assert not (home / "prefect.db-wal").exists()


def test_the_command_shows_its_servers_errors_until_a_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "server.log"
    path.touch()
    log = ServerLog(path, TEMPORARY)
    error = [
        "12:00:00.001 | ERROR   | prefect.server - boom",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "ValueError: x",
    ]
    try:
        with path.open("a") as out:
            print("12:00:00.000 | WARNING | prefect.server - slow", *error, "INFO:     fine", sep="\n", file=out)
        log.copy_errors()
        assert capsys.readouterr().err.splitlines() == [f"{TEMPORARY} logged an error (its log: {path}):", *error]

        stop = threading.Event()
        stop.set()
        monkeypatch.setattr(interrupt, "_stop", stop)  # a signal came: what the server says now is about the stop
        with path.open("a") as out:
            print(*error, sep="\n", file=out)
        log.copy_errors()
        assert capsys.readouterr().err == ""
    finally:
        log.quiet()


# A command whose work does not look at the stop flag (a teardown stuck on a busy machine, before
# its line or after it), armed as the CLI arms itself.
_STUCK = """
import multiprocessing, sys, time
from interleaf.runtime import interrupt
held = multiprocessing.get_context("forkserver").SimpleQueue()  # named semaphores, as a page pool holds
interrupt.arm()
print("armed", file=sys.stderr, flush=True)
while not interrupt.requested():
    time.sleep(0.01)
if sys.argv[1] == "after-the-line":
    try:
        interrupt.stopped("the work so far")
    finally:
        time.sleep(60)
time.sleep(60)
"""


@pytest.mark.parametrize("stuck", ["before-the-line", "after-the-line"])
def test_a_command_stuck_after_a_stop_still_exits_within_seconds(stuck: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _STUCK, stuck], cwd=REPO, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None and proc.stderr.readline() == "armed\n"
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        err = proc.stderr.read()
        proc.wait(timeout=interrupt.HARD_S + 5)
        seconds = time.monotonic() - sent
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert interrupt.GRACE_S < seconds < interrupt.HARD_S + 2, seconds
    # one line: the command's own when it got that far, else the one the stop's end prints for it
    kept = "the work so far" if stuck == "after-the-line" else "what finished before the stop is kept"
    assert err.splitlines() == [f"interrupted: {kept}; {interrupt.RESUME}"], err
