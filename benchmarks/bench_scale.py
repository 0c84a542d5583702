"""Scaling out: `make bench` (scale part). In one run, prints

- the ingest of docs/ + scale/ into a fresh warehouse with `executor.kind: local`: pages/s end to
  end and the peak memory (summed PSS) of the command and every process it started; then the same
  under `parse.memory_budget_mb` at the peak's target, and whether it stored the same quotes;
- the same ingest with `executor.kind: ray` on a local cluster of 2 worker nodes of 1 CPU each
  (the same 2 cores): its time against local's (the engine's overhead), the cluster's peak memory,
  and whether it stored the same quotes per document;
- the page-range parse of the 619-page manual on a cluster of 1 and of 2 workers (parse.pages_per_chunk
  pages a unit), what one range costs, and the rerun after an interrupt at about half of it;
- a projection for N workers from the measured per-unit costs.

`--local-only`: the first item and the docs/ + scale/ projection only (no Ray; about 11 min here).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_parse import BIG, tree_usage  # noqa: E402
from benchmarks.ray_cluster import LocalCluster, local_cluster  # noqa: E402
from benchmarks.stopping import exit_on_sigterm, stopped_at_exit  # noqa: E402
from interleaf.config import PAGES, Settings, load_settings  # noqa: E402
from interleaf.parse.stage import ParseStage, SourceFile  # noqa: E402
from interleaf.runtime.executor import PageLimits  # noqa: E402
from interleaf.runtime.ray_engine import ray_page_map, worker_environment  # noqa: E402
from pipeline.context import RunContext, new_run_id  # noqa: E402
from pipeline.stage_task import Plan, UnitResult, run_unit  # noqa: E402
from warehouse import Warehouse  # noqa: E402
from warehouse.catalog import connect  # noqa: E402

PEAK_TARGET_MB = 1536
PAGES_PER_S_TARGET = 3.0
OVERHEAD_TARGET = 0.15


@dataclass
class Ingest:
    seconds: float
    pages: int
    peak_mb: float  # summed PSS of the command's process tree (and of the cluster's nodes, on Ray)
    at_peak: dict[str, float]  # MB of PSS by kind of process at the peak
    stdout: str
    by_role: dict[str, list[float]] = field(default_factory=dict)  # each second's MB of PSS by kind of process
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds by kind of process
    busy: float = 0.0  # the share of the machine's CPU time that was busy over the run, any process's

    @property
    def rate(self) -> float:
        return self.pages / self.seconds


def ingest(
    warehouse: Path,
    paths: list[Path],
    overrides: list[str],
    cluster: LocalCluster | None = None,
    config: Path | None = None,
) -> Ingest:
    """A real `interleaf ingest`, its memory and CPU time sampled every second over its processes
    (and the cluster's): reading the PSS of each process costs CPU, and sampling five times a second
    took ~20% of one core from the ingest it measured. A process's CPU time is its last sample's, so
    what one did in the second before it ended is not counted."""
    sets = [arg for o in overrides for arg in ("--set", o)]
    sets += ["--config", str(config)] if config else []
    command = [sys.executable, "-m", "interleaf.cli", "--warehouse", str(warehouse), *sets, "ingest", *map(str, paths)]
    # the cluster's processes' CPU time before the run (its start, earlier runs) is not the run's
    before: list[dict[int, tuple[str, float]]] = [{}]
    for pid in cluster.pids if cluster else []:
        before.append({})
        tree_usage(psutil.Process(pid), before[-1])
    started, machine_before = time.perf_counter(), psutil.cpu_times()
    with (
        tempfile.TemporaryFile() as out,
        stopped_at_exit(subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)) as proc,
    ):
        roots = [psutil.Process(proc.pid), *(psutil.Process(p) for p in (cluster.pids if cluster else []))]
        peak, at_peak = 0, {}
        by_role: dict[str, list[float]] = {}
        cpu: list[dict[int, tuple[str, float]]] = [{} for _ in roots]  # by root, by pid: (role, CPU s)
        while proc.poll() is None:
            samples = [tree_usage(root, seen) for root, seen in zip(roots, cpu, strict=True)]
            now: dict[str, float] = {}
            for name, sample in zip(["command", *("ray node" for _ in roots[1:])], samples, strict=True):
                for role, used in sample[2].items():
                    kind = role if name == "command" else name
                    now[kind] = now.get(kind, 0) + used / 2**20
            for kind, used in now.items():
                by_role.setdefault(kind, []).append(used)
            if (pss := sum(sample[1] for sample in samples)) > peak:
                peak, at_peak = pss, now
            time.sleep(1.0)
        seconds = time.perf_counter() - started
        busy = _busy_share(machine_before, psutil.cpu_times())
        out.seek(0)
        stdout = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({proc.returncode}):\n{stdout[-3000:]}")
    pages = int(re.search(r"(\d+) pages parsed", stdout).group(1))  # type: ignore[union-attr]
    cpu_s: dict[str, float] = {}
    for number, (seen, earlier) in enumerate(zip(cpu, before, strict=True)):
        for pid, (role, used) in seen.items():
            # on a Ray node, its worker processes (named ray::...) against Ray's own (raylet, GCS, agents)
            kind = role if number == 0 else role if role == "Ray workers" else "Ray's own processes"
            cpu_s[kind] = cpu_s.get(kind, 0) + used - earlier.get(pid, (role, 0.0))[1]
    return Ingest(seconds, pages, peak / 2**20, at_peak, stdout, by_role, cpu_s, busy)


def _busy_share(before: Any, after: Any) -> float:
    """The busy share of the CPU time between two `psutil.cpu_times()` (guest time is in user's already)."""

    def spent(times: Any, fields: tuple[str, ...]) -> float:
        return sum(getattr(times, name, 0.0) for name in fields)

    waiting, guests = ("idle", "iowait"), ("guest", "guest_nice")
    total = sum(after) - spent(after, guests) - sum(before) + spent(before, guests)
    idle = spent(after, waiting) - spent(before, waiting)
    return 1 - idle / total if total > 0 else 0.0


def _roles(run: Ingest) -> str:
    return ", ".join(f"{role} {mb:.0f}" for role, mb in sorted(run.at_peak.items(), key=lambda kv: -kv[1]))


def _roles_over_run(run: Ingest) -> str:
    """Each kind of process's median and largest PSS over the seconds it ran: what it holds most of
    the time, and its own largest, which need not fall at the peak of the sum."""
    kinds = sorted(run.by_role.items(), key=lambda kv: -statistics.median(kv[1]))
    return ", ".join(f"{kind} {statistics.median(mb):.0f} / {max(mb):.0f}" for kind, mb in kinds)


def _cpu(run: Ingest) -> str:
    """Where the run's CPU time went: each kind of process's seconds, and the machine's busy share."""
    kinds = ", ".join(f"{kind} {s:.0f}" for kind, s in sorted(run.cpu_s.items(), key=lambda kv: -kv[1]))
    cores = psutil.cpu_count() or 1
    return (
        f"CPU time by kind of process (s): {kinds}; in all {sum(run.cpu_s.values()):.0f} of the "
        f"{cores} cores' {cores * run.seconds:.0f} s; the machine's CPUs busy {100 * run.busy:.0f}%"
    )


def _query(warehouse: Path, sql: str) -> list[tuple[Any, ...]]:
    con = connect(Warehouse(warehouse))
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


def quotes_per_document(warehouse: Path) -> dict[str, str]:
    """doc_id -> a hash of its quotes' rows in order: two warehouses with the same quotes match."""
    sql = "SELECT doc_id, md5(string_agg(CAST(q AS VARCHAR), '|' ORDER BY quote_id)) FROM quotes q GROUP BY doc_id"
    return dict(_query(warehouse, sql))


def stage_seconds(warehouse: Path) -> dict[str, list[float]]:
    """Each stage's unit times in the warehouse's ledger (the units that ran, not cached ones)."""
    out: dict[str, list[float]] = {}
    sql = "SELECT split_part(stage, ':', 1), epoch(ended_at - started_at) FROM runs WHERE status = 'ok'"
    for stage, seconds in _query(warehouse, sql):
        out.setdefault(stage, []).append(float(seconds))
    return out


class StopAfter:
    """A page map that stops the parse (as Ctrl-C or a killed worker would) once `runs` runs of pages ended."""

    def __init__(self, page_map: Callable[..., Iterator[Any]], runs: int | None) -> None:
        self.page_map, self.runs, self.done = page_map, runs, 0

    def __call__(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for result in self.page_map(fn, items):
            if self.runs is not None and self.done == self.runs:
                raise KeyboardInterrupt
            self.done += 1
            yield result


def parse_on_cluster(
    root: Path, pdf: Path, settings: Settings, address: str, stop_after: int | None = None
) -> tuple[UnitResult | None, float, int]:
    """The parse unit of `pdf` in this process, its runs of pages on the cluster at `address`
    -> its result (None when stopped), seconds, runs of pages that ran."""
    import ray

    # the workers import this checkout's code and use this run's settings, as an ingest's would
    ray.init(address=address, runtime_env={"env_vars": worker_environment()}, configure_logging=False)
    try:
        plan = Plan.of([ParseStage(settings.parse)])
        ctx = RunContext(new_run_id(), "ingest", str(root), settings)
        doc_id = hashlib.sha256(pdf.read_bytes()).hexdigest()
        limits = settings.parse.limits
        page_limits = PageLimits(limits.page_timeout_s, limits.timeout_s, time.monotonic())
        pages = StopAfter(ray_page_map(settings.executor.for_stage(PAGES), None, page_limits), stop_after)
        started = time.perf_counter()
        try:
            source = SourceFile(str(pdf), doc_id)
            result = run_unit(ctx, plan, "parse", doc_id, source=source, path=str(pdf), page_map=pages)
        except KeyboardInterrupt:
            result = None
        return result, time.perf_counter() - started, pages.done
    finally:
        ray.shutdown()


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--workdir", type=Path, help="for the warehouses and cluster files (default: a temporary folder)")
    ap.add_argument("--local-only", action="store_true", help="the local ingest and its projection only (no Ray)")
    ap.add_argument("--config", type=Path, help="the ingests' config file (default: configs/default.yaml)")
    args = ap.parse_args()
    corpus: Path = args.corpus
    paths = [corpus / "docs", corpus / "scale"]
    manual = corpus / "scale" / BIG
    begun = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp_name:
        work = args.workdir or Path(tmp_name)
        # a local budget is refused on Ray (a node has its own memory): the cluster's runs go without
        ray_overrides = ["executor.kind=ray", "parse.memory_budget_mb=null"]
        settings = load_settings(args.config, overrides=ray_overrides)
        chunk = settings.parse.pages_per_chunk

        local = ingest(work / "local", paths, [], config=args.config)
        print(
            f"ingest docs/ + scale/, executor local: {local.pages} pages in {local.seconds:.0f} s = "
            f"{local.rate:.2f} pages/s (target >= {PAGES_PER_S_TARGET}); "
            f"peak memory {local.peak_mb:.0f} MB PSS (target < {PEAK_TARGET_MB}): {_roles(local)}",
            flush=True,
        )
        print(f"  memory by kind of process over the run (median / largest MB PSS): {_roles_over_run(local)}")
        print(f"  {_cpu(local)}", flush=True)
        # the same ingest under a memory budget of the target: what holding memory down costs in time
        budget = [f"parse.memory_budget_mb={PEAK_TARGET_MB}"]
        # a folder of its own: the warehouse's parent holds the Prefect home, and a second command in
        # a home already made starts a server that holds ~30 MB less
        budgeted = ingest(work / "budgeted" / "local", paths, budget, config=args.config)
        same = quotes_per_document(work / "budgeted" / "local") == quotes_per_document(work / "local")
        print(
            f"ingest docs/ + scale/, executor local, {budget[0]}: {budgeted.pages} pages in "
            f"{budgeted.seconds:.0f} s = {budgeted.rate:.2f} pages/s; peak memory {budgeted.peak_mb:.0f} MB PSS: "
            f"{_roles(budgeted)}; same quotes per document as without: {'yes' if same else 'NO'}",
            flush=True,
        )
        print(f"  memory by kind of process over the run (median / largest MB PSS): {_roles_over_run(budgeted)}")
        units = stage_seconds(work / "local")
        print(
            "  its units (ledger): "
            + "; ".join(f"{s} {len(t)} units, {sum(t):.0f} s" for s, t in sorted(units.items())),
            flush=True,
        )
        # parse and describe spread their pages over the workers; an index unit runs whole on one
        work_s = sum(sum(t) for t in units.values())
        longest = max(max(t) for stage, t in units.items() if stage.startswith("index"))
        print(
            f"projection for docs/ + scale/ (the ledger's {work_s:.0f} s of units shared by N workers, "
            f"no less than its longest index unit, {longest:.0f} s): "
            + ", ".join(f"{n} workers {max(work_s / n, longest):.0f} s" for n in (4, 8, 16, 32)),
            flush=True,
        )
        if args.local_only:
            print(f"bench_scale took {time.perf_counter() - begun:.0f}s")
            return
        with local_cluster(work / "ray2", nodes=2, cpus=1) as cluster:
            on_ray = ingest(
                work / "ray", paths, [*ray_overrides, f"executor.address={cluster.address}"], cluster, args.config
            )
            overhead = on_ray.seconds / local.seconds - 1
            same = quotes_per_document(work / "ray") == quotes_per_document(work / "local")
            print(
                f"ingest docs/ + scale/, executor ray (2 workers x 1 CPU): {on_ray.seconds:.0f} s = "
                f"{on_ray.rate:.2f} pages/s; overhead against local {100 * overhead:+.1f}% "
                f"(target <= {100 * OVERHEAD_TARGET:.0f}%); peak memory, command + cluster, "
                f"{on_ray.peak_mb:.0f} MB PSS ({_roles(on_ray)}); "
                f"same quotes per document as local: {'yes' if same else 'NO'}",
                flush=True,
            )
            print(f"  {_cpu(on_ray)}", flush=True)
            two, two_s, runs = parse_on_cluster(work / "manual2", manual, settings, cluster.address)
            assert two is not None and two.status == "ok", two
            half = runs // 2
            cut, cut_s, _ = parse_on_cluster(work / "manual-cut", manual, settings, cluster.address, stop_after=half)
            assert cut is None
            rerun, rerun_s, rerun_runs = parse_on_cluster(work / "manual-cut", manual, settings, cluster.address)
            assert rerun is not None and rerun.status == "ok", rerun
        with local_cluster(work / "ray1", nodes=1, cpus=1) as cluster:
            one, one_s, _ = parse_on_cluster(work / "manual1", manual, settings, cluster.address)
            assert one is not None and one.status == "ok", one
        pages = two.counts["pages"]
        per_run = one_s / runs
        print(
            f"page-range parse of {BIG} ({pages} pages, {runs} runs of {chunk}): 1 worker {one_s:.0f} s "
            f"({pages / one_s:.2f} pages/s), 2 workers {two_s:.0f} s ({pages / two_s:.2f} pages/s, "
            f"speed-up {one_s / two_s:.2f}x); one run of {chunk} pages {per_run:.1f} s on 1 worker",
            flush=True,
        )
        print(
            f"interrupted after {half} of {runs} runs ({cut_s:.0f} s); the rerun parsed {rerun_runs} runs "
            f"in {rerun_s:.0f} s ({100 * rerun_s / two_s:.0f}% of a whole parse), "
            f"{rerun.counts.get('pages from an interrupted run', 0)} pages taken from the interrupted run",
            flush=True,
        )
        # a projection, not a measurement: the whole-document steps stay on one worker, the runs of
        # pages spread; N workers are N cores that run no other work
        serial = max(0.0, one_s - per_run * runs)
        projected = ", ".join(f"{n} workers {serial + per_run * -(-runs // n):.0f} s" for n in (4, 8, 16, 32))
        print(f"projection for the parse of {BIG} (per-run cost x runs / N + the serial {serial:.0f} s): {projected}")
        print(f"bench_scale took {time.perf_counter() - begun:.0f}s")


if __name__ == "__main__":
    main()
