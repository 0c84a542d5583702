"""The answer flow, per question set: questions -> expand -> retrieve -> generate -> evaluate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.ingest import ingest_stages
from interleaf import interrupt, progress
from interleaf.config import Settings
from interleaf.errors import InterleafError, StageError
from interleaf.evaluate.stage import EvaluateStage
from interleaf.expand.stage import ExpandStage
from interleaf.generate.protocol import Generator
from interleaf.generate.stage import GenerateStage
from interleaf.questions.stage import QuestionSet, QuestionsStage
from interleaf.retrieve.loaded_index import IndexHolder, LoadedIndex
from interleaf.retrieve.stage import RetrieveStage
from interleaf.stage import Stage, StageInput
from tasks.context import RunContext
from tasks.stage_task import LazyTables, Plan, UnitResult, run_unit
from tasks.units import corpus_digest, corpus_units
from warehouse import Warehouse
from warehouse.store import StageState


def answer_stages(
    settings: Settings,
    generate: bool = True,
    evaluate: bool = True,
    generator: Generator | None = None,
    indexes: IndexHolder | None = None,
) -> list[Stage]:
    """`generate=False`: retrieval only (an ablation variant is scored on recall alone);
    `evaluate=False`: no gold to score against (`interleaf ask`); `indexes`: where the loaded
    index is kept (shared by every plan that searches the same corpus)."""
    scope, budgets = settings.retrieve.scope, settings.retrieve.budgets
    answered = settings.generate if generate else None
    return [
        QuestionsStage(),
        ExpandStage(settings.expand),
        RetrieveStage(settings.retrieve, settings.index, settings.expand, indexes),
        *([GenerateStage(settings.generate, scope, generator)] if generate else []),
        *([EvaluateStage(settings.evaluate, scope, budgets, answered)] if evaluate else []),
    ]


def answer_plan(
    wh: Warehouse,
    settings: Settings,
    generate: bool = True,
    state: dict[str, StageState] | None = None,
    **options: Any,
) -> Plan:
    """The ingest stages (whose stored outputs the query stages read) and the query stages, over
    the documents published in `state` (the published state read once for a whole run; None:
    read now)."""
    ingest = Plan.of(ingest_stages(settings))
    documents = corpus_units(wh, ingest, state)
    given = ingest.fingerprints | {"corpus": corpus_digest(ingest, documents)}
    stages = answer_stages(settings, generate, **options)
    return Plan(ingest.stages + stages, given | Plan.of(stages, given).fingerprints, documents)


def query_stages(plan: Plan) -> list[Stage]:
    return [s for s in plan.stages if s.unit == "question_set"]


@task(name="stage", task_run_name="{stage}", cache_policy=NO_CACHE, log_prints=False)
def stage_task(ctx: RunContext, plan: Plan, stage: str, qset: QuestionSet) -> UnitResult:
    started = time.perf_counter()
    source = qset if stage == "questions" else None
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


def open_index(wh: Warehouse, settings: Settings, indexes: IndexHolder | None = None) -> LoadedIndex:
    """Every configured retriever loaded from its stored rows, into `indexes` when given (the
    server's warm-up and reload), so that the questions asked next find it loaded."""
    plan = answer_plan(wh, settings, indexes=indexes)
    stage = plan.stage("retrieve")
    assert isinstance(stage, RetrieveStage)
    given = StageInput(
        "", LazyTables.inputs(wh, plan, stage, ""), wh.root, upstream={u: plan.fingerprints[u] for u in stage.upstream}
    )
    return stage.load_index(given)
