"""A benchmark stopped by SIGTERM stops the `interleaf` command it runs, and that command's page
workers and Prefect server (`benchmarks/stopping.py`): SIGTERM's default had left bench_scale's
ingest running. So do `make faults` stopped by Ctrl-C, and a test session's start stopped while its
shared Prefect server comes up or ended while its background ingest runs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.prefect_home import cli_env

REPO = Path(__file__).resolve().parent.parent
# a bench's shape: SIGTERM made an exit, and an ingest run under stopped_at_exit until it ends; its
# output not into the pipe the test reads one line of, which could fill and stall it
BENCH = """
import subprocess, sys
from benchmarks.stopping import exit_on_sigterm, stopped_at_exit
exit_on_sigterm()
command = [sys.executable, "-m", "interleaf.cli", "ingest", sys.argv[1]]
with stopped_at_exit(subprocess.Popen(command, stdout=subprocess.DEVNULL)) as proc:
    print(proc.pid, flush=True)
    proc.wait()
"""
START_S = 120.0  # the ingest's page workers and server up, on a loaded 2-core machine
STOP_S = 30.0  # its SIGINT grace (3 s), the kill after benchmarks.stopping.STOP_S, and slack


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _execed(tree: list[psutil.Process]) -> bool:
    """The tree holds a child that no longer runs its parent's command line (it has exec'd)."""
    try:
        return len(tree) >= 2 and tree[1].cmdline() != tree[0].cmdline()
    except psutil.NoSuchProcess:
        return False


def _running_tree(pid: int, parent: subprocess.Popen[str]) -> list[psutil.Process]:
    """`pid` and its children once its Prefect server and forkserver have started (more than the
    command alone), or an assertion naming what there was."""
    deadline = time.monotonic() + START_S
    tree: list[psutil.Process] = []
    while len(tree := _tree(pid)) < 3 and time.monotonic() < deadline and parent.poll() is None:
        time.sleep(0.5)
    assert len(tree) >= 3, [p.cmdline()[:3] for p in tree]
    return tree


def _kill_left(parent: subprocess.Popen[str], tree: list[psutil.Process]) -> None:
    """What a failed assertion found alive."""
    if parent.poll() is None:
        parent.kill()
    for process in [*_tree(parent.pid), *tree]:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()


@pytest.mark.slow
def test_a_bench_stopped_by_sigterm_leaves_nothing_it_started_running(tmp_path: Path, corpus: Path) -> None:
    pdf = corpus / "scale" / "irs-manual-400p.pdf"  # long enough to be stopped mid-way
    env = cli_env(tmp_path / "warehouse", own_server=True)
    bench = subprocess.Popen(
        [sys.executable, "-c", BENCH, str(pdf)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    tree: list[psutil.Process] = []
    try:
        ingest = int(bench.stdout.readline()) if bench.stdout else 0
        tree = _running_tree(ingest, bench)
        bench.send_signal(signal.SIGTERM)
        exit_status = bench.wait(timeout=STOP_S)
        _, alive = psutil.wait_procs(tree, timeout=STOP_S)
        assert not alive, [p.cmdline()[:4] for p in alive]
        assert exit_status == 128 + signal.SIGTERM
    finally:
        _kill_left(bench, tree)


# a cleanup (as a bench's, after a first signal) that a second signal reaches half-way through
CLEANUP = """
import os, signal, sys, time
from benchmarks.stopping import exit_on_sigterm, signals_held
exit_on_sigterm()
# Ctrl-C's handler, as in a terminal: a command started in the background by a shell without job
# control (CI's) inherits SIGINT ignored, and an ignored signal stays ignored once the cleanup ends
signal.signal(signal.SIGINT, signal.default_int_handler)
second = getattr(signal, sys.argv[1])
try:
    raise KeyboardInterrupt  # the first signal
finally:
    with signals_held():
        print("cleanup began", flush=True)
        os.kill(os.getpid(), second)
        time.sleep(0.3)
        print("cleanup ended", flush=True)
"""


@pytest.mark.parametrize("second", ["SIGTERM", "SIGINT"])
def test_a_second_signal_waits_for_the_cleanup_then_acts(second: str) -> None:
    done = subprocess.run([sys.executable, "-c", CLEANUP, second], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["cleanup began", "cleanup ended"], done.stdout + done.stderr
    if second == "SIGTERM":  # exit_on_sigterm's SystemExit, raised once the cleanup ended
        assert done.returncode == 128 + signal.SIGTERM, done.stderr
    else:  # a KeyboardInterrupt again, raised once the cleanup ended (Python then ends by SIGINT)
        assert done.returncode == -signal.SIGINT, done.stderr
        assert "in signals_held" in done.stderr and done.stderr.rstrip().endswith("KeyboardInterrupt"), done.stderr


# `make faults`' shape: a command spawned in a process group of its own (benchmarks/faults/common.py),
# which a terminal's Ctrl-C does not reach, and the harness interrupted while it runs
FAULT_HARNESS = """
import signal, sys
from pathlib import Path
from benchmarks.faults.common import spawn
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C's handler, as in a terminal (see CLEANUP)
proc = spawn(Path(sys.argv[2]), "ingest", sys.argv[1])
print(proc.pid, flush=True)
proc.wait()
"""


@pytest.mark.slow
def test_a_fault_harness_stopped_by_ctrl_c_stops_the_commands_it_spawned(tmp_path: Path, corpus: Path) -> None:
    pdf = corpus / "scale" / "irs-manual-400p.pdf"  # long enough to be stopped mid-way
    harness = subprocess.Popen(
        [sys.executable, "-c", FAULT_HARNESS, str(pdf), str(tmp_path / "warehouse")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    tree: list[psutil.Process] = []
    try:
        ingest = int(harness.stdout.readline()) if harness.stdout else 0
        tree = _running_tree(ingest, harness)
        assert os.getpgid(ingest) != os.getpgid(harness.pid)  # a group of its own: Ctrl-C would not reach it
        harness.send_signal(signal.SIGINT)  # the harness's group only: the ingest is in a group of its own
        harness.wait(timeout=STOP_S)
        _, alive = psutil.wait_procs(tree, timeout=STOP_S)
        assert not alive, [p.cmdline()[:4] for p in alive]
    finally:
        _kill_left(harness, tree)


# a test session's start (tests/conftest.py), interrupted while the shared Prefect server it starts,
# in a session of its own, is still coming up
SHARING = """
import signal
from tests.support.prefect_home import share_server
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C's handler, as in a terminal (see CLEANUP)
share_server()
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_session_stopped_while_its_shared_prefect_server_starts_takes_the_server_too(sig: signal.Signals) -> None:
    """Ctrl-C: the session kills the server's group; kill -9 (or a Ctrl-C inside Popen, before it
    returns the pid): the server sees its stdin close and kills its own group."""
    env = {k: v for k, v in os.environ.items() if k != "INTERLEAF_SHARED_PREFECT_API_URL"}  # not this session's
    starting = subprocess.Popen([sys.executable, "-c", SHARING], cwd=REPO, env=env)
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + START_S
        # until the server's process has run its own program: between its fork and its exec it is
        # still a copy of this one, in this one's group (its new session begins just before the exec)
        while not _execed(tree := _tree(starting.pid)) and time.monotonic() < deadline and starting.poll() is None:
            time.sleep(0.1)
        assert len(tree) >= 2, "the server did not start"
        assert os.getpgid(tree[1].pid) != os.getpgid(starting.pid)  # a group of its own: Ctrl-C would not reach it
        starting.send_signal(sig)  # the server needs seconds more to come up (9 s here)
        assert starting.wait(timeout=STOP_S) != 0
        # gone with it, not once it has come up and found no one listening
        _, alive = psutil.wait_procs(tree, timeout=3)
        assert not alive, [p.cmdline()[:4] for p in alive]
    finally:
        _kill_left(starting, tree)


# the pytest-xdist controller's start of its background ingest of docs/ + bad/ (tests/conftest.py),
# and a session that ends while it runs: a selection of a few tests, or pytest stopped by a signal
SESSION = """
import sys
from tests.support.prefect_home import adopt_shared_server
from tests.conftest import _start_corpus_ingest
adopt_shared_server()  # this session's server, as the controller's ingest uses its own session's
_start_corpus_ingest()
print("started", flush=True)
sys.stdin.read()  # until the test has seen the ingest run
"""


def test_a_test_session_that_ends_first_stops_its_background_corpus_ingest(corpus: Path) -> None:
    session = subprocess.Popen(
        [sys.executable, "-c", SESSION], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    tree: list[psutil.Process] = []
    try:
        assert session.stdout and session.stdout.readline() == "started\n"
        # its page workers at work (the ingest, its forkserver and resource tracker, 2 workers)
        deadline = time.monotonic() + START_S
        while len(tree := _tree(session.pid)[1:]) < 5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any("interleaf.cli" in p.cmdline() for p in tree), [p.cmdline()[:3] for p in tree]
        time.sleep(3)  # past the line it prints as its flow starts: the next is seconds away
        if session.stdin:
            session.stdin.close()  # the session ends, its ingest of ~130 s just begun
        assert session.wait(timeout=STOP_S) == 0
        # stopped before the session ended, not left to end at its next line into the closed pipe
        _, alive = psutil.wait_procs(tree, timeout=5)
        assert not alive, [p.cmdline()[:4] for p in alive]
    finally:
        _kill_left(session, tree)
