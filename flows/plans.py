"""What the flows run, without Prefect: the stages of an ingest and of an answer, and the plan an
answer's stages run under. `interleaf ask` and the server build their plans from here and run the
stages themselves; importing Prefect is left to the commands that run a flow. Measured here, an
`ask` over a one-document warehouse took 3.2 s of CPU while it imported `flows/answer.py` (Prefect:
1.5 s of it), 1.4 s without."""

from __future__ import annotations

from typing import Any

from interleaf.config import Settings
from interleaf.describe.stage import DescribeStage
from interleaf.evaluate.stage import EvaluateStage
from interleaf.expand.stage import ExpandStage
from interleaf.generate.protocol import Generator
from interleaf.generate.stage import GenerateStage
from interleaf.index.stage import IndexStage
from interleaf.parse.stage import ParseStage
from interleaf.questions.stage import QuestionsStage
from interleaf.retrieve.loaded_index import IndexHolder, LoadedIndex
from interleaf.retrieve.stage import RetrieveStage
from interleaf.stage import Stage, StageInput
from pipeline.stage_task import LazyTables, Plan
from pipeline.units import corpus_digest, corpus_units
from warehouse import Warehouse
from warehouse.store import StageState


def ingest_stages(settings: Settings) -> list[Stage]:
    hold_models = settings.parse.memory_budget_mb is None  # under a budget, index loads its model per document
    return [
        ParseStage(settings.parse),
        DescribeStage(settings.describe),
        *(IndexStage(spec, settings.index, hold_model=hold_models) for spec in settings.index.retrievers),
    ]


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
    corpus = {"corpus": corpus_digest(ingest, documents)}
    return Plan.of(ingest.stages + answer_stages(settings, generate, **options), corpus, corpus=documents)


def query_stages(plan: Plan) -> list[Stage]:
    return [s for s in plan.stages if s.unit == "question_set"]


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
