"""kill -9 of the ingest at seeded random points: the rerun ends identical to an uninterrupted one.

An uninterrupted ingest of a few short documents is the reference; while it runs, every file that
appears in its warehouse is timed. Each case then starts the same ingest in a fresh warehouse and
kills its whole process group (the command, its page workers; Prefect's server, in a session of
its own, watches the command and follows it) at a point drawn with `random.Random(seed)`: after a
random count of the reference's files has appeared (the warehouse polled every few milliseconds),
or at a random time within the reference's run, counted from the file before it. So kills land
mid-parse, mid-describe, mid-index, between a temporary write and its rename, around the publish. The same command is
then run again to completion; it must end with the reference's rows (no row lost, none added), no
`running` ledger row, and no process of the killed command alive. At full size two cases also
kill the rerun once before the last run (compounded kills).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pyarrow.parquet as pq

from benchmarks.faults.common import FaultContext, Outcome, cli_env, contents, interleaf, rows_added, rows_lost, spawn

FAULT = "kill -9 of the ingest"
# one page each, quick to ingest, and between them every stage's work: a figure and a table to
# describe (corrosion-plot-table), a table page (layoutparser-table-page), two indexes
DOCS = ("corrosion-plot-table.pdf", "layoutparser-table-page.pdf")
KILLS = {"ci": 2, "full": 10}
COMPOUNDED = {"ci": 0, "full": 2}  # of the cases, how many kill the rerun too
POLL_S = 0.005
GONE_WITHIN_S = 5.0  # the workers and the Prefect server watch the command twice a second


@dataclass(frozen=True)
class KillPoint:
    """Kill `after_s` seconds after the `files`-th of the reference's files appeared (0: after the
    start), and at the latest when the next one appears: a point inside a long step (start-up, a
    page's parse, a model load) is reached whatever the machine's speed that day, and a kill never
    falls past the ingest's end for want of a clock that ran slower for the reference."""

    files: int
    after_s: float = 0.0

    def __str__(self) -> str:
        return f"at file {self.files}" + (f" + {self.after_s:.1f} s" if self.after_s else "")


@dataclass(frozen=True)
class Kill:
    """Where one kill landed."""

    point: KillPoint
    files: int  # the warehouse's files when the group died
    of: int  # the reference's
    seconds: float  # after the start
    running: tuple[str, ...]  # the stages the ledger showed running
    temporaries: int  # temporary files left: the kill fell between a write and its rename
    published: bool  # whether this run had published already
    finished_first: bool  # the command ended before the kill point came

    def __str__(self) -> str:
        if self.finished_first:
            return f"{self.point}: the ingest finished first"
        where = "+".join(self.running) or ("after publish" if self.published else "between units")
        tmp = f", {self.temporaries} temp file(s) left" if self.temporaries else ""
        return f"after {self.files} of {self.of} files ({self.seconds:.1f} s), {where}{tmp}"


def warehouse_files(root: Path) -> list[str]:
    """The warehouse's files (relative paths), without temporaries and the lock file."""
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names if not n.startswith(".")]
    return found


@dataclass
class Writes:
    """What a watched ingest wrote: each file's size when first seen, and when a file was deleted
    (a document's page range checkpoint goes once its parse commits)."""

    sizes: dict[str, int] = field(default_factory=dict)
    gone: dict[str, float] = field(default_factory=dict)


def timeline(
    root: Path, proc: subprocess.Popen[str], writes: Writes | None = None, started: float | None = None
) -> tuple[list[tuple[float, str]], float]:
    """Watch an ingest to its end: each file with when it first appeared; and how long it ran.
    Times count from `started` (`time.monotonic()`; by default, now)."""
    started = time.monotonic() if started is None else started
    seen: dict[str, float] = {}

    def look(at: float) -> None:
        present = set(warehouse_files(root))
        for name in present - seen.keys():
            seen[name] = at
            if writes is not None:
                with contextlib.suppress(FileNotFoundError):
                    writes.sizes[name] = (root / name).stat().st_size
        if writes is not None:
            for name in seen.keys() - present - writes.gone.keys():
                writes.gone[name] = at

    while proc.poll() is None:
        look(time.monotonic() - started)
        time.sleep(POLL_S)
    seconds = time.monotonic() - started
    look(seconds)
    return sorted((t, n) for n, t in seen.items()), seconds


def kill_at(root: Path, proc: subprocess.Popen[str], point: KillPoint, of: int) -> Kill:
    started = time.monotonic()
    since = started if point.files == 0 else None  # when the point's file appeared
    while proc.poll() is None:
        seen = len(warehouse_files(root))
        if since is None and seen >= point.files:
            since = time.monotonic()
        if seen > point.files or (since is not None and time.monotonic() - since >= point.after_s):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(POLL_S)
    seconds = time.monotonic() - started
    proc.communicate()
    finished = proc.returncode is not None and proc.returncode >= 0
    return Kill(
        point,
        len(warehouse_files(root)),
        of,
        seconds,
        running_stages(root),
        len(list(root.rglob(".*.tmp-*"))),
        (root / "_state" / "current.json").exists(),
        finished,
    )


def running_stages(root: Path) -> tuple[str, ...]:
    """The stages whose ledger rows say `running` (read from the parts: no command runs to close them)."""
    stages = set()
    for part in (root / "runs" / "ledger").glob("*.parquet"):
        with contextlib.suppress(OSError, ValueError):  # a part is whole or absent; be safe anyway
            row = pq.read_table(part, columns=["stage", "status"]).to_pylist()[0]
            if row["status"] == "running":
                stages.add(row["stage"])
    return tuple(sorted(stages))


def running_rows(root: Path) -> list[str]:
    """`running` rows of the runs view (the killed command's are closed by the rerun's start)."""
    from warehouse import Warehouse
    from warehouse.catalog import connect

    con = connect(Warehouse(root))
    try:
        rows = con.execute("select stage, pid from runs where status = 'running'").fetchall()
    finally:
        con.close()
    return [f"{stage} (pid {pid})" for stage, pid in rows]


def left_alive(pgid: int, root: Path) -> list[str]:
    """Processes of the killed command still alive after GONE_WITHIN_S: its process group, and
    anything started with its warehouse in the environment (Prefect's server, in its own session)."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while True:
        left = []
        for p in psutil.process_iter(["pid", "status"]):
            with contextlib.suppress(psutil.Error, ProcessLookupError):
                if p.info["status"] == psutil.STATUS_ZOMBIE:
                    continue
                if os.getpgid(p.pid) == pgid or p.environ().get("INTERLEAF_WAREHOUSE") == str(root):
                    left.append(f"{p.pid} {' '.join(p.cmdline()[:4])}")
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def kill_points(rng: random.Random, n: int, events: list[tuple[float, str]]) -> list[KillPoint]:
    """Half on a file written (the later stages, the publish), half at a time drawn within the
    reference's run before its last file (start-up, long steps), placed after the file before it."""
    points = []
    for i in range(n):
        if i % 2 == 0:
            points.append(KillPoint(rng.randint(1, len(events) - 1)))
        else:
            at = rng.uniform(0.0, events[-1][0])
            k = sum(1 for t, _ in events if t <= at)
            points.append(KillPoint(k, round(at - (events[k - 1][0] if k else 0.0), 2)))
    rng.shuffle(points)
    return points


def run(ctx: FaultContext) -> Outcome:
    files = [str(ctx.corpus / "docs" / name) for name in DOCS]
    args = ("ingest", *files)
    rng = random.Random(ctx.seed)

    # every command with its own Prefect server: a kill -9 must take that server too (left_alive)
    reference_root = ctx.scratch("reference") / "warehouse"
    proc = spawn(reference_root, *args, env=cli_env(reference_root, own_server=True))
    events, reference_s = timeline(reference_root, proc)
    _, err = proc.communicate()
    if proc.returncode != 0:
        return Outcome(FAULT, 0, 0, 0, "the reference ingest failed", [err.strip()[-500:]])
    reference = contents(reference_root)
    n_files = len(events)

    points = kill_points(rng, KILLS[ctx.size], events)
    compounded = set(rng.sample(range(len(points)), COMPOUNDED[ctx.size]))
    survived, lost, failures, landed, reruns = 0, 0, [], [], []
    for i, point in enumerate(points):
        root = ctx.scratch(f"case-{i:02d}") / "warehouse"
        kills, problems = [], []
        # the rerun killed too in a compounded case, at a point drawn the same way
        again = kill_points(rng, 1, events) if i in compounded else []
        for at in [point, *again]:
            killed = spawn(root, *args, env=cli_env(root, own_server=True))
            kills.append(kill_at(root, killed, at, n_files))
            problems += [f"alive after the kill: {p}" for p in left_alive(killed.pid, root)]
        landed.append(" then ".join(str(k) for k in kills))
        result = interleaf(root, *args, env=cli_env(root, own_server=True))
        reruns.append(result.seconds)
        if result.returncode != 0 or "0 failed" not in result.stdout or "Traceback" in result.stderr:
            problems.append(f"rerun exit {result.returncode}: {(result.stdout + result.stderr).strip()[-300:]}")
        got = contents(root)
        case_lost, case_added = rows_lost(reference, got), rows_added(reference, got)
        lost += case_lost
        if case_lost or case_added:
            problems.append(f"{case_lost} rows lost, {case_added} added")
        if running := running_rows(root):
            problems.append(f"ledger rows still running after the rerun: {running}")
        problems += [f"alive after the rerun: {p}" for p in left_alive(-1, root)]
        if problems:
            failures.append(f"case {i} ({landed[-1]}): {'; '.join(problems)}")
        else:
            survived += 1
        # a long run shows where it is
        print(
            f"  kill9 case {i}: {landed[-1]}; rerun {result.seconds:.0f} s; {'; '.join(problems) or 'ok'}",
            file=sys.stderr,
            flush=True,
        )

    detail = (
        f"{len(DOCS)} docs, reference {reference_s:.0f} s, {n_files} files; rerun median "
        f"{statistics.median(reruns):.0f} s, max {max(reruns):.0f} s; kills: " + " | ".join(landed)
    )
    return Outcome(FAULT, len(points), survived, lost, detail, failures)
