"""Progress from the first second, and an interrupt line that says what was kept (issue 52): a piped
ingest of the 400-page IRS manual says what it does within 5 s of its start, before Prefect's
temporary server is up, then its pages as its parse checkpoint saves them; stopped by Ctrl-C, it
names the pages kept, which the rerun does not parse again."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import psutil

from tests.conftest import CORPUS, REPO
from tests.support.prefect_home import cli_env

IRS = CORPUS / "scale" / "irs-manual-400p.pdf"
FIRST_LINE_S = 5.0


def _lines(stream: IO[str]) -> queue.Queue[str | None]:
    """`stream`'s lines as they come, from a thread (None once it ends)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _pages_saved(root: Path) -> int:
    """The pages the parse checkpoint's parts name (`<doc_id>.p<first>-<last>.parquet`)."""
    runs = [re.search(r"\.p(\d+)-(\d+)\.parquet$", p.name) for p in root.glob("page_results/*/*.parquet")]
    return sum(int(m[2]) - int(m[1]) + 1 for m in runs if m)


def _left(root: Path) -> list[psutil.Process]:
    """The processes still alive that the command started (they inherit its warehouse)."""
    found = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if p.environ().get("INTERLEAF_WAREHOUSE") == str(root) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
    return found


def test_a_piped_ingest_says_where_it_is_from_the_start_and_a_stop_names_the_pages_kept(tmp_path: Path) -> None:
    root = tmp_path / "warehouse"
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "interleaf.cli", "ingest", str(IRS)],
        cwd=REPO,
        env=cli_env(root, own_server=True),  # as a user runs it: its own Prefect server, seconds to start
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill below takes its workers too
    )
    assert proc.stderr is not None
    lines = _lines(proc.stderr)
    err: list[str] = []
    signalled = None
    try:
        first = lines.get(timeout=FIRST_LINE_S)
        first_s = time.monotonic() - started
        assert first == f"ingest: {IRS.name}, 400 pages to parse", first
        err.append(first)
        # then, a few seconds into its parse, where it is: the pages its checkpoint holds
        pages = re.compile(rf"parse {re.escape(IRS.name)}: (\d+) of 400 pages \(\d+ s\)")
        told = None
        while told is None:
            line = lines.get(timeout=240)
            assert line is not None, f"the ingest ended before it said where its parse was: {err}"
            err.append(line)
            told = pages.fullmatch(line)
        proc.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if signalled is not None:
                print(f"still running {time.monotonic() - signalled:.1f} s after SIGINT; what it said:")
        for left in _left(root):
            left.kill()
        err += iter(lines.get, None)  # the stream ends with the process: on a failure, pytest shows these
        print(*err, sep="\n")
    print(f"first line {first_s:.1f} s after the start")
    assert proc.returncode == 130, err
    assert int(told[1]) > 0, "a line before any page was saved: it says nothing a log needs"
    assert err[-1].startswith("interrupted: 0 of 1 document kept; "), err
    # the pages on disk when the command ended, at least those the line told: the checkpoint is read
    kept = re.search(rf"; {re.escape(IRS.name)}: (\d+) of 400 pages parsed, resumes there;", err[-1])
    assert kept and int(told[1]) <= int(kept[1]) == _pages_saved(root), err[-1]
