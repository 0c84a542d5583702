"""The ingest flow: documents -> parse (-> describe -> index, as those stages land)."""

from __future__ import annotations

from prefect import flow
from prefect.task_runners import ThreadPoolTaskRunner

from interleaf.errors import InterleafError
from interleaf.executor import shutdown_pools
from tasks.context import RunContext
from tasks.describe_task import describe_task
from tasks.index_task import index_task
from tasks.parse_task import ParseSummary, parse_task
from tasks.publish_task import publish_task

# Stages in order; `interleaf run --from STAGE` recomputes that one and every later one.
STAGES = ("parse", "describe", "index")


class IngestError(InterleafError):
    def __init__(self, failures: list[tuple[str, BaseException]]) -> None:
        lines = "; ".join(f"{path}: {exc}" for path, exc in failures)
        super().__init__(f"{len(failures)} document(s) failed unexpectedly: {lines}")
        self.failures = failures


def stages_from(stage: str | None) -> frozenset[str]:
    if stage is None:
        return frozenset()
    if stage not in STAGES:
        raise InterleafError(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}")
    return frozenset(STAGES[STAGES.index(stage) :])


# Two documents in flight keep the page workers busy while one of them is being written.
@flow(name="ingest", task_runner=ThreadPoolTaskRunner(max_workers=2), log_prints=False)
def ingest_flow(ctx: RunContext, paths: list[str]) -> list[ParseSummary]:
    futures = {path: parse_task.submit(ctx, path) for path in paths}
    summaries, failures, described = [], [], {}
    for path, future in futures.items():
        try:
            summaries.append(future.result())
        except Exception as exc:  # collected: the batch goes on, and the flow fails at the end
            failures.append((path, exc))
            continue
        if summaries[-1].status in ("ok", "cached"):  # describe starts while later documents parse
            described[path] = describe_task.submit(ctx, summaries[-1].doc_id)
    shutdown_pools()  # parsing is over: free the page workers' memory before index loads its models
    for path, future in described.items():
        try:
            future.result()
        except Exception as exc:
            failures.append((path, exc))
    publish_task(ctx)
    index_task(ctx)  # after publish: it reads quotes and quote_texts through the current views
    if failures:
        raise IngestError(failures)
    return summaries
