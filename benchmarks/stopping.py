"""How a benchmark stops what it started when it ends first (an error, Ctrl-C, SIGTERM).

Ctrl-C in a terminal reaches the whole process group, so the `interleaf` commands a bench runs
stop themselves. SIGTERM, what a scheduler or `kill` sends, reaches the bench alone, and its
default ends the bench without running any `finally`: seen with bench_scale, whose ingest ran on
(and a Ray cluster it starts runs in sessions of its own). `exit_on_sigterm` turns SIGTERM into
SystemExit, so context managers and `subprocess.run` (which kills its child on any exception)
clean up; `stopped_at_exit` stops a `Popen` the bench watches itself.

A second signal while a bench cleans up (a SIGTERM after a Ctrl-C, a second Ctrl-C) raised in the
middle of that cleanup and ended it half-way: bench_scale, sent SIGINT and 25 s later SIGTERM during
its Ray ingest, left its loopback cluster and that ingest running. A cleanup runs `signals_held`:
such a signal waits for the cleanup to end, then acts.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

STOP_S = 15.0  # what a command gets to stop on SIGINT (an ingest's own grace is 3 s) before a kill

P = TypeVar("P", bound=subprocess.Popen)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_on_sigterm() -> None:
    """SIGTERM raises SystemExit in the main thread (exit status 143)."""
    signal.signal(signal.SIGTERM, _exit)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held off during the block (a cleanup), then raised again once it ended, to
    their handlers as they were (only the main thread takes signals; elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    before = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])


@contextmanager
def stopped_at_exit(proc: P) -> Iterator[P]:
    """`proc`, stopped as Ctrl-C stops it if the block ends while it runs: an `interleaf` command
    stops its page workers and Prefect server itself, and after STOP_S it is killed (they watch
    their parent)."""
    try:
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """`proc`, if it still runs, sent SIGINT as Ctrl-C would, and killed after STOP_S."""
    with signals_held():
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
