"""Disk full while writing: a clear error, the previous snapshot intact and readable, and the
rerun, once there is room, ending as an undisturbed ingest does.

A warehouse with one document published is the base; the reference ingests a second document
into a copy of it, watched file by file: polled, and each write and deletion of the command's
process traced as it happens (`write_trace.py`: the poll misses a file that lives a few
milliseconds, a run of pages' checkpoint). From that timeline come the fill levels: the room left
on a small tmpfs so that the same ingest runs out during a parse part, a crop image, a ledger
row, the describe cache or an index part (`random.Random(seed)` picks which file of each kind).
The cases run in a private mount namespace (`unshare -m`, or `unshare -rm` without root), so no
mount is seen outside; where mounting is refused, ENOSPC is injected at the write instead
(`enospc.py`). The publish is always run out of room by injection: on a real filesystem every
write just before it (the last ledger rows) needs the same one page, so no fill level singles it
out. The cases themselves are in `disk_full_cases.py`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.faults.common import REPO, FaultContext, Outcome, interleaf, spawn
from benchmarks.faults.disk_full_cases import PAGE, Case, CaseResult, Plan, plan_to_json, run_cases
from benchmarks.faults.kill9 import Writes, timeline, warehouse_files
from benchmarks.faults.write_trace import read as read_trace

FAULT = "disk full while writing"
BASE_DOC = "layoutparser-table-page.pdf"  # the published snapshot: one quick page
NEW_DOC = "corrosion-plot-table.pdf"  # ingested onto the full disk: parts, crops, describe cache, index
# what the disk runs out on, by the first file of the ingest's timeline matching the pattern
TARGETS = {
    "parse part": "documents/*",  # the commit part: pages, quotes and sections are written already
    "crop image": "images/*",
    "ledger row": "runs/ledger/*__describe__*",
    "describe cache": "cache/*",
    "index part": "quote_embeddings/*",
}
PUBLISH = "_state/current.json"
SIZES = {"ci": ["crop image", "publish"], "full": [*TARGETS, "publish"]}


def mount_command(probe: Path) -> list[str] | None:
    """`unshare -m` (root) or `unshare -rm` (a user namespace) where a tmpfs mounts there; else None
    (and None with FAULTS_NO_MOUNT=1 in the environment: the injection path, run on purpose)."""
    if not shutil.which("unshare") or os.environ.get("FAULTS_NO_MOUNT") == "1":
        return None
    probe.mkdir(parents=True, exist_ok=True)
    for flags in (["-m"], ["-rm"]):
        try:
            done = subprocess.run(
                ["unshare", *flags, "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs '{probe}' && umount '{probe}'"],
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return ["unshare", *flags]
    return None


def fill_levels(events: list[tuple[float, str]], writes: Writes, rng: random.Random) -> dict[str, tuple[int, str]]:
    """For each target: the bytes the ingest can write before it runs out inside one file of that
    kind (tmpfs counts whole pages), and that file's pattern for injection. The room taken before a
    file is that of the files written before it and not yet deleted then."""
    levels = {}
    written = [(t, name, -(-writes.sizes[name] // PAGE)) for t, name in events if name in writes.sizes]
    for target, pattern in TARGETS.items():
        matches = [i for i, (_, name, _) in enumerate(written) if fnmatch.fnmatch(name, pattern)]
        if not matches:
            continue
        i = rng.choice(matches)
        at, name, pages = written[i]
        used = sum(size for _, other, size in written[:i] if writes.gone.get(other, float("inf")) > at)
        exact = f"runs/ledger/*__{name.split('__', 1)[1]}" if name.startswith("runs/ledger/") else name
        levels[target] = ((used + pages // 2) * PAGE, exact)  # mid-file when it spans pages
    return levels


def with_trace(
    events: list[tuple[float, str]], writes: Writes, traced: list[dict[str, Any]], started: float
) -> list[tuple[float, str]]:
    """The polled timeline with the traced writes and deletions put in: a traced file's time,
    size and deletion are the trace's (the poll sees a file some milliseconds late, or never)."""
    seen = {name: at for at, name in events}
    for line in traced:
        name, at = line["path"], line["at"] - started
        if line["op"] == "write" and (name not in seen or at < seen[name]):
            seen[name], writes.sizes[name] = at, line["size"]
        elif line["op"] == "delete" and name in seen and name not in writes.gone:
            writes.gone[name] = at
    return sorted((at, name) for name, at in seen.items())


def run(ctx: FaultContext) -> Outcome:
    rng = random.Random(ctx.seed)
    base = ctx.scratch("base") / "warehouse"
    made = interleaf(base, "ingest", str(ctx.corpus / "docs" / BASE_DOC))
    if made.returncode != 0:
        return Outcome(FAULT, 0, 0, 0, "the base ingest failed", [made.stderr.strip()[-500:]])
    reference = ctx.scratch("reference") / "warehouse"
    shutil.copytree(base, reference)
    new_doc = str(ctx.corpus / "docs" / NEW_DOC)
    journal = ctx.workdir / "reference-writes.jsonl"
    started = time.monotonic()
    proc = spawn(
        reference, "ingest", new_doc, via=("benchmarks.faults.write_trace", str(reference), str(journal), "--")
    )
    writes = Writes()
    events, _ = timeline(reference, proc, writes, started)
    _, err = proc.communicate()
    if proc.returncode != 0:
        return Outcome(FAULT, 0, 0, 0, "the reference ingest failed", [err.strip()[-500:]])
    events = with_trace(events, writes, read_trace(journal), started)
    before = set(warehouse_files(base))
    levels = fill_levels([(t, n) for t, n in events if n not in before], writes, rng)

    command = mount_command(ctx.workdir / "probe")
    mode = "tmpfs" if command else "inject"
    cases = []
    for target in SIZES[ctx.size]:
        if target == "publish":
            cases.append(Case(target, "inject", pattern=PUBLISH))
        elif target in levels:
            free, pattern = levels[target]
            cases.append(Case(target, mode, free_bytes=free, pattern=pattern))
    plan = Plan(str(base), new_doc, str(reference), str(ctx.workdir / "cases"), str(ctx.workdir / ".prefect"), cases)

    if command:
        plan_file, results_file = ctx.workdir / "plan.json", ctx.workdir / "results.json"
        plan_file.write_text(plan_to_json(plan))
        done = subprocess.run(
            [*command, sys.executable, "-m", "benchmarks.faults.disk_full_cases", str(plan_file), str(results_file)],
            cwd=REPO,
            env={**os.environ},
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0 or not results_file.exists():
            return Outcome(FAULT, len(cases), 0, 0, f"the cases did not run ({mode})", [done.stderr.strip()[-800:]])
        results = [CaseResult(**r) for r in json.loads(results_file.read_text())]
    else:
        results = run_cases(plan)

    failures = [f"{r.target} ({r.how}): {'; '.join(r.problems)}" for r in results if r.problems]
    how = "a tmpfs per case in a private mount namespace" if command else "ENOSPC injected at the write"
    landed = "; ".join(f"{r.target}: ran out at {r.landed or '?'} ({r.how}), {r.seconds:.0f} s" for r in results)
    rerun = max((r.rerun_seconds for r in results), default=0.0)
    detail = f"{how}; {landed}; reruns up to {rerun:.0f} s"
    return Outcome(
        FAULT, len(results), sum(not r.problems for r in results), sum(r.rows_lost for r in results), detail, failures
    )
