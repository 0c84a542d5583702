"""kill -9 of a compaction and of an index snapshot's build: the views never change, the rerun
ends as an undisturbed run.

A reference warehouse holds a few short documents, ingested with compaction left for later. Each
compaction case copies it, runs `interleaf gc --compact` and kills the command's process group at
a seeded point: after a seeded count of the files it writes under `_packs/` (packs and manifests)
have appeared, so kills land between a pack and its manifest, between a manifest and the removal
of the loose parts it replaces, and between two folders. The views must show the reference's
rows at once (none lost, none doubled), and `gc --compact` run again must leave no loose
published part and the same rows. Each snapshot case kills `interleaf ask` (whose retrieve stage
builds and stores the query index) at a seeded moment of its run; the warehouse must then answer
the same question as an undisturbed copy does, from a snapshot whole or from the stored rows.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.faults.common import FaultContext, Outcome, contents, interleaf, rows_added, rows_lost, spawn

FAULT = "kill -9 of a compaction or an index snapshot's build"
DOCS = ("corrosion-plot-table.pdf", "layoutparser-table-page.pdf", "backus-1977-page.pdf", "amt-handbook-page.pdf")
CASES = {"ci": (2, 1), "full": (8, 4)}  # (compaction kills, snapshot kills)
QUESTION = "What does the table on corrosion rates report?"
POLL_S = 0.001


def run(ctx: FaultContext) -> Outcome:
    reference = ctx.scratch("reference") / "warehouse"
    docs = ctx.scratch("docs")
    for name in DOCS:
        shutil.copy(ctx.corpus / "docs" / name, docs / name)
    ingested = interleaf(reference, "ingest", str(docs))
    if ingested.code != 0:
        return Outcome(FAULT, 0, 0, 0, f"the reference ingest exited {ingested.code}: {ingested.stderr[-300:]}")
    expected = contents(reference)
    undisturbed = _copy(reference, ctx.scratch("undisturbed"))
    interleaf(undisturbed, "gc", "--compact")
    answer = interleaf(_copy(reference, ctx.scratch("loose-answer")), "ask", QUESTION).stdout
    rng = random.Random(ctx.seed)
    written = sum(1 for _ in undisturbed.glob("*/*/_packs/*"))
    compactions, snapshots = CASES[ctx.size]
    failures: list[str] = []
    lost = 0
    details = []
    for case in range(compactions):
        at = rng.randint(1, max(written - 1, 1))
        root = _copy(reference, ctx.scratch(f"compaction-{case}"))
        killed = _kill_after(
            spawn(root, "--warehouse", str(root), "gc", "--compact"), lambda r=root, n=at: _packed(r) >= n
        )
        seen = contents(root)
        rerun = interleaf(root, "gc", "--compact")
        after = contents(root)
        loose = _loose_published(root)
        case_lost = rows_lost(expected, seen) + rows_lost(expected, after)
        lost += case_lost
        details.append(f"compaction killed at pack file {at}" + ("" if killed else " (finished first)"))
        if case_lost or rows_added(expected, seen) or rows_added(expected, after) or loose or rerun.code:
            failures.append(
                f"compaction case {case} (pack file {at}): lost {case_lost}, loose {loose}, rerun {rerun.code}"
            )
    for case in range(snapshots):
        root = _copy(reference, ctx.scratch(f"snapshot-{case}"))
        shutil.rmtree(root / "snapshots", ignore_errors=True)
        after_s = rng.uniform(0.5, 4.0)
        start = time.monotonic()
        proc = spawn(root, "--warehouse", str(root), "ask", QUESTION)
        killed = _kill_after(proc, lambda s=start, a=after_s: time.monotonic() - s >= a)
        again = interleaf(root, "ask", QUESTION)
        details.append(f"ask killed at {after_s:.1f} s" + ("" if killed else " (finished first)"))
        if again.code != 0 or again.stdout != answer or list(root.rglob(".*.tmp-*")):
            failures.append(
                f"snapshot case {case} ({after_s:.1f} s): rerun exited {again.code}, "
                f"same answer: {again.stdout == answer}"
            )
    cases = compactions + snapshots
    return Outcome(FAULT, cases, cases - len(failures), lost, "; ".join(details), failures)


def _copy(reference: Path, folder: Path) -> Path:
    root = folder / "warehouse"
    shutil.copytree(reference, root)
    return root


def _packed(root: Path) -> int:
    return sum(1 for _ in root.glob("*/*/_packs/*"))


def _loose_published(root: Path) -> int:
    from warehouse import Warehouse, schemas

    wh = Warehouse(root)
    return sum(len(wh.published_reads(t).files) for t in schemas.TABLES)


def _kill_after(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> bool:
    """kill -9 `proc`'s process group once `ready()` holds; False when it ended first."""
    while proc.poll() is None:
        if ready():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(POLL_S)
    return False
