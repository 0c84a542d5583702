"""The answer flow, per question set: questions -> expand -> retrieve -> generate -> evaluate."""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.plans import query_stages
from interleaf.errors import InterleafError, StageError
from interleaf.questions.stage import QuestionSet
from interleaf.runtime import interrupt, progress
from pipeline.context import RunContext
from pipeline.stage_task import Plan, UnitResult, run_unit


@task(name="stage", task_run_name="{stage}", cache_policy=NO_CACHE, log_prints=False)
def stage_task(ctx: RunContext, plan: Plan, stage: str, qset: QuestionSet) -> UnitResult:
    started = time.perf_counter()
    source = qset if stage == plan.entry("question_set").name else None
    try:
        result = run_unit(ctx, plan, stage, qset.qset_id, source=source, path=qset.source)
    except StageError as exc:
        if not isinstance(exc.__cause__, InterleafError):
            raise  # a bug: its traceback belongs in the log
        # an error raised on purpose (a model server down): the CLI's one line, not a traceback
        result = UnitResult(stage, qset.qset_id, "failed", reason=str(exc))
    progress.unit_done(Path(qset.source).name or qset.qset_id, result, started)
    return result


@flow(name="answer", log_prints=False)
def answer_flow(ctx: RunContext, plans: list[Plan], qset: QuestionSet) -> list[UnitResult]:
    """Each plan is one configuration (a scope, an ablation variant) of the same stages. A stage
    that failed ends the flow: the stages after it read its output."""
    interrupt.arm()  # Prefect's engine put its own SIGTERM handler in place of ours
    results = []
    for plan in plans:
        for stage in query_stages(plan):
            results.append(stage_task(ctx, plan, stage.name, qset))
            if results[-1].status == "failed":
                return results
    return results
