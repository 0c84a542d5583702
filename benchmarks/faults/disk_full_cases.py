"""The disk-full cases, run where the disk can fill: in a private mount namespace, each on a small
tmpfs of its own (`python -m benchmarks.faults.disk_full_cases PLAN.json RESULTS.json` under
`unshare -m`), or, where mounting is refused, with ENOSPC injected at the write (`enospc.py`).

Each case: the published warehouse (one document) copied onto the case's filesystem; the disk
filled so that ingesting one more document runs out at the case's point; that ingest must fail
with one clear line naming the file and "No space left on device", no traceback, no temporary
file left, and the views exactly as before (read while the disk is still full). Then, with the
space freed, `ask` answers from that snapshot and the same ingest, run again, ends as the
reference does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.faults.common import REPO, Cli, cli_env, contents, interleaf, rows_added, rows_lost
from tests.support.prefect_home import adopt_shared_server

NO_SPACE = "No space left on device"
PAGE = 4096
QUESTION = "What does the table on the page show?"


@dataclass(frozen=True)
class Case:
    target: str  # what the disk runs out on: "crop image", "ledger", "publish", ...
    mode: str  # "tmpfs": a fill level on a small filesystem; "inject": ENOSPC at a matching write
    free_bytes: int = 0  # tmpfs: the room left for the ingest
    pattern: str = ""  # inject: the first write to run out (fnmatch, relative to the warehouse)


@dataclass
class CaseResult:
    target: str
    how: str
    landed: str = ""  # the file named by the error line
    error: str = ""
    seconds: float = 0.0  # of the failed ingest
    rerun_seconds: float = 0.0
    rows_lost: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    base: str  # the published warehouse, copied into each case
    new_doc: str  # the document ingested onto the full disk
    reference: str  # a warehouse where the same ingest ran undisturbed
    workdir: str
    prefect_home: str  # kept off the small filesystem: the warehouse is what runs out of room
    cases: list[Case]


def _tmpfs(mountpoint: Path, size: int) -> None:
    mountpoint.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)], check=True)


def _fill(mountpoint: Path, leave: int) -> Path:
    """A file taking all the room but `leave` bytes."""
    stat = os.statvfs(mountpoint)
    filler = mountpoint / "filler"
    with filler.open("wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, max(stat.f_bavail * stat.f_frsize - leave, PAGE))
    return filler


def _error_lines(cli: Cli) -> list[str]:
    return [line for line in cli.stderr.splitlines() if line.startswith("error:")]


def run_case(plan: Plan, case: Case, index: int, before: dict, reference: dict) -> CaseResult:
    result = CaseResult(case.target, f"{case.mode}")
    home = Path(plan.workdir) / f"case-{index:02d}"
    if home.exists():
        shutil.rmtree(home)
    mountpoint = home / "disk"
    if case.mode == "tmpfs":
        used = sum(f.stat().st_size // PAGE + 2 for f in Path(plan.base).rglob("*") if f.is_file()) * PAGE
        _tmpfs(mountpoint, used + case.free_bytes + 16 * 1024 * 1024)
    root = mountpoint / "warehouse"
    shutil.copytree(plan.base, root)
    # the Prefect home off the full disk (cli_env's is beside the warehouse): what runs out of room
    # is the warehouse alone. The session's shared server where there is one (the tests'), as for
    # the reference ingest; otherwise each command starts its own there, as a user's does.
    env = cli_env(root, PREFECT_HOME=plan.prefect_home, PREFECT_LOCAL_STORAGE_PATH=f"{plan.prefect_home}/storage")
    filler = _fill(mountpoint, case.free_bytes) if case.mode == "tmpfs" else None
    if case.mode == "tmpfs":
        result.how = f"tmpfs, {case.free_bytes // 1024} KiB left"
        failed = interleaf(root, "ingest", plan.new_doc, env=env)
    else:
        result.how = f"ENOSPC injected from the write of {case.pattern}"
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.faults.enospc", str(root), case.pattern, "--", "ingest", plan.new_doc],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        failed = Cli(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)
    result.seconds = failed.seconds
    problems = result.problems
    errors = _error_lines(failed)
    result.error = errors[0] if errors else (failed.stderr.strip().splitlines() or [""])[-1]
    if failed.returncode == 0:
        problems.append("the ingest exited 0 on a full disk")
    if len(errors) != 1 or NO_SPACE not in errors[0] or str(root) not in errors[0]:
        problems.append(f"not one error line naming the file and {NO_SPACE!r}: {errors or failed.stderr[-300:]}")
    else:
        result.landed = os.path.relpath(errors[0].removeprefix("error: ").split(": ")[0], root)
    if "Traceback" in failed.stderr + failed.stdout:
        problems.append("a traceback was printed")
    if left := [str(p.relative_to(root)) for p in root.rglob(".*.tmp-*")]:
        problems.append(f"temporary files left: {left}")

    # still full: the snapshot published before must read exactly as it did
    if (got := contents(root)) != before:
        problems.append(f"views changed: {rows_lost(before, got)} rows lost, {rows_added(before, got)} added")
    read = interleaf(root, "sql", "select count(*) as quotes from quotes", env=env)
    if read.returncode != 0:
        problems.append(f"`sql` failed on the full disk: {read.stderr.strip()[-200:]}")

    if filler is not None:  # space freed
        filler.unlink()
    asked = interleaf(root, "ask", QUESTION, env=env)
    if asked.returncode != 0 or "Sources" not in asked.stdout:
        problems.append(f"`ask` did not answer: {(asked.stdout + asked.stderr).strip()[-300:]}")
    rerun = interleaf(root, "ingest", plan.new_doc, env=env)
    result.rerun_seconds = rerun.seconds
    if rerun.returncode != 0 or "0 failed" not in rerun.stdout:
        problems.append(f"the rerun failed: {(rerun.stdout + rerun.stderr).strip()[-300:]}")
    got = contents(root)
    result.rows_lost = rows_lost(reference, got)
    if result.rows_lost or rows_added(reference, got):
        problems.append(f"after the rerun: {result.rows_lost} rows lost, {rows_added(reference, got)} added")
    running = interleaf(root, "sql", "select count(*) as n from runs where status = 'running'", "--json", env=env)
    if running.returncode != 0 or json.loads(running.stdout or "[{}]")[0].get("n") != 0:
        problems.append(f"ledger rows left running: {running.stdout.strip()}")
    if case.mode == "tmpfs":
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)
    return result


def run_cases(plan: Plan) -> list[CaseResult]:
    before, reference = contents(Path(plan.base)), contents(Path(plan.reference))
    return [run_case(plan, case, i, before, reference) for i, case in enumerate(plan.cases)]


def plan_to_json(plan: Plan) -> str:
    return json.dumps(asdict(plan), default=str)


def plan_from_json(text: str) -> Plan:
    raw = json.loads(text)
    return Plan(**{**raw, "cases": [Case(**c) for c in raw["cases"]]})


def main(argv: list[str]) -> None:
    adopt_shared_server()  # run by disk_full.py in a mount namespace of its own: its server, if it has one
    plan = plan_from_json(Path(argv[0]).read_text())
    results = run_cases(plan)
    Path(argv[1]).write_text(json.dumps([asdict(r) for r in results]))


if __name__ == "__main__":
    main(sys.argv[1:])
