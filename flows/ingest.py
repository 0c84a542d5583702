"""The ingest flow: documents -> parse (-> describe -> index, as those stages land)."""

from __future__ import annotations

from prefect import flow
from prefect.task_runners import ThreadPoolTaskRunner

from interleaf.errors import InterleafError
from tasks.context import RunContext
from tasks.parse_task import ParseSummary, parse_task
from tasks.publish_task import publish_task

# Stages in order; `interleaf run --from STAGE` recomputes that one and every later one.
STAGES = ("parse",)


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
    summaries, failures = [], []
    for path, future in futures.items():
        try:
            summaries.append(future.result())
        except Exception as exc:  # collected: the batch goes on, and the flow fails at the end
            failures.append((path, exc))
    publish_task(ctx)
    if failures:
        raise IngestError(failures)
    return summaries
