"""The ingest flow, per document: the ingest stages of flows/plans.py, in the levels their
declarations give (parse -> describe -> one index stage per retriever)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from flows.page_work import page_work_map, unit_progress
from interleaf.config import Settings
from interleaf.errors import InterleafError, StageError, WarehouseWriteError
from interleaf.parse.facts import DocumentFacts
from interleaf.parse.stage import SourceFile
from interleaf.runtime import interrupt, progress, ray_engine
from interleaf.runtime.executor import shutdown_pools
from interleaf.stage import PageMap
from pipeline.chains import run_chains
from pipeline.context import RunContext
from pipeline.follow import DocumentChange
from pipeline.stage_task import Plan, UnitResult, publish, run_unit
from warehouse.store import INGEST_GROUP

GROUP = INGEST_GROUP
UNWRITABLE = "unwritable"  # a unit's status when a warehouse write failed: the ingest stops, unpublished


@task(name="stage", task_run_name="{stage}:{path}", cache_policy=NO_CACHE, log_prints=False)
def stage_task(ctx: RunContext, plan: Plan, stage: str, unit: str, path: str, source: object = None) -> UnitResult:
    started = time.perf_counter()
    pages: PageMap = map
    on_saved = None
    if plan.stage(stage).page_work:
        whole_document = plan.stage(stage) is plan.entry("document")
        pages, on_saved = unit_progress(stage, path, source, page_work_map(ctx.settings, whole_document))
    try:
        result = run_unit(ctx, plan, stage, unit, source=source, path=path, page_map=pages, on_saved=on_saved)
    except WarehouseWriteError as exc:  # a result, not an exception: Prefect would log a traceback
        return UnitResult(stage, unit, UNWRITABLE, reason=str(exc))
    except StageError as exc:
        if not isinstance(exc.__cause__, InterleafError):
            raise  # a bug: its traceback belongs in the log
        # an error raised on purpose (a model server down): a row of the report, not a traceback
        result = UnitResult(stage, unit, "failed", reason=str(exc))
    if ctx.settings.executor.kind == "local":  # on a cluster the command's process shows it (reported_here)
        progress.unit_done(Path(path).name, result, started)
    return result


IN_FLIGHT = 2  # documents begun and not ended: two keep the page workers busy while one is written


def task_runner(settings: Settings) -> TaskRunner:
    """The engine the ingest's units run on (`executor.kind`)."""
    if settings.executor.kind == "ray":
        return ray_engine.task_runner(settings.executor)
    return ThreadPoolTaskRunner(max_workers=2 * IN_FLIGHT)


@flow(name="ingest", task_runner=ThreadPoolTaskRunner(max_workers=2 * IN_FLIGHT), log_prints=False)
def ingest_flow(
    ctx: RunContext,
    plan: Plan,
    files: dict[str, str],
    change: DocumentChange,
    facts: dict[str, DocumentFacts] | None = None,
) -> tuple[list[UnitResult], list[tuple[str, str]]]:
    """`files`: path -> doc_id. Every stage of every document runs; done ones return `cached`.
    Each document's chain (parse -> describe -> its index stages side by side) goes on as soon as
    its own previous stage ended, with no barrier between documents (pipeline/chains.py).
    -> the results, and (path, error) of each document a stage failed on (the batch goes on).
    `change`: the documents the published set gains and loses when this ingest publishes.
    `facts`: path -> what parse reads of the whole file, read before the flow (flows/runner.py).
    After a stop, units not begun are not run, and nothing is published: the views stay on the
    last finished ingest, and a rerun resumes from what was committed."""
    interrupt.arm()  # Prefect's engine put its own SIGTERM handler in place of ours
    results: list[UnitResult] = []
    failures: list[tuple[str, str]] = []
    entry = plan.entry("document")  # made from the file: parse
    levels = plan.levels()
    # the page workers serve the levels up to the last one with page work; the levels after it run
    # once they are gone under a memory budget (interleaf/runtime/memory_budget.py: the peaks came from the
    # index's encoding beside a page worker's OCR)
    last_page_work = max(
        (i for i, level in enumerate(levels) if any(plan.stage(s).page_work for s in level)), default=-1
    )
    after_page_work = last_page_work + 1 if last_page_work + 1 < len(levels) else None

    executor = ctx.settings.executor
    on_ray = executor.kind == "ray"
    submitted: dict[tuple[str, str], float] = {}
    on_cluster: list[PrefectFuture] = []
    if on_ray:  # a worker does not see this process's stop flag: its units are cancelled after the grace period
        interrupt.on_stop(lambda: ray_engine.cancel(on_cluster))

    def submit(stage: str, path: str) -> PrefectFuture:
        source = SourceFile(path, files[path], (facts or {}).get(path)) if stage == entry.name else None
        submitted[stage, path] = time.perf_counter()
        if not on_ray:
            return stage_task.submit(ctx, plan, stage, files[path], path, source)
        with ray_engine.remote_options(executor.for_stage(stage)):
            future = stage_task.submit(ctx, plan, stage, files[path], path, source)
        on_cluster.append(future)
        return future

    def reported_here(path: str, result: UnitResult) -> None:
        """On a cluster, the unit ran in a worker: its page count and line are shown from here."""
        if result.stage == entry.name:
            progress.advance(result.counts.get("pages", 0))
        progress.unit_done(Path(path).name, result, submitted[result.stage, path])

    run_chains(
        list(files),
        levels,
        submit,
        ended=_collector(results, failures, on_result=reported_here if on_ray else None),
        # on a cluster, enough documents begun to give each of its CPUs a unit
        in_flight=max(IN_FLIGHT, ray_engine.cluster_cpus()) if on_ray else IN_FLIGHT,
        halted=lambda: interrupt.requested() or unwritable(results) is not None,
        # the page workers' models are not held once no document is left to describe (index loads its own)
        on_level_over=lambda level: shutdown_pools() if level == last_page_work else None,
        held_level=after_page_work if ctx.settings.parse.memory_budget_mb is not None else None,
    )
    if interrupt.requested() or unwritable(results):  # the views stay on the last finished ingest
        return results, failures
    # a document a stage failed on (a model server down, a bug) is not added to the views half-done:
    # its parse rows without their descriptions or index; a rerun adds it whole
    unfinished = frozenset(files[path] for path, _ in failures if path in files)
    try:
        publish(ctx, plan, GROUP, units=DocumentChange(change.added - unfinished, change.dropped).apply)
    except WarehouseWriteError as exc:
        return [*results, UnitResult("publish", GROUP, UNWRITABLE, reason=str(exc))], failures
    return results, failures


def unwritable(results: list[UnitResult]) -> str | None:
    """Why the warehouse could not be written (a full disk), when a unit or the publish found so."""
    return next((r.reason for r in results if r.status == UNWRITABLE), None)


def _collector(
    results: list[UnitResult],
    failures: list[tuple[str, str]],
    on_result: Callable[[str, UnitResult], None] | None = None,
) -> Callable[[str, PrefectFuture], bool]:
    """Takes one unit's outcome into `results` or `failures`; True when its document goes on."""

    def ended(path: str, future: PrefectFuture) -> bool:
        try:
            result = future.result()
        except interrupt.Interrupted:  # stopped: not a failure, and not kept
            return False
        except Exception as exc:  # collected: the batch goes on, and the CLI exits 1 at the end
            if interrupt.requested():  # a unit cancelled on a cluster for the stop
                return False
            failures.append((path, f"{type(exc).__name__}: {exc}"))
            return False
        if result.status == "failed":
            failures.append((path, result.reason or "failed"))
            return False
        results.append(result)
        if on_result is not None:
            on_result(path, result)
        return result.status in ("ok", "cached")

    return ended
