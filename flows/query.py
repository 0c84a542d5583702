"""Runs the answer flow for the CLI: `answer`, `eval` (scopes x ablation variants) and `ask`.

When every query stage is already stored for the question set under the configured
fingerprints, Prefect is not started at all: the views are pointed at the stored outputs and the
ledger records the run as cached.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from flows.plans import answer_plan, query_stages
from interleaf.config import Settings
from interleaf.errors import InterleafError
from interleaf.evaluate.ablation import FULL, Variant
from interleaf.evaluate.answers import Answered
from interleaf.questions.stage import QuestionSet
from interleaf.render import AnswerView
from interleaf.retrieve.loaded_index import IndexHolder
from interleaf.runtime.prefect_server import ensure_prefect_api
from interleaf.scope import DocumentCatalog, scoped_question_set
from interleaf.stored_answers import TABLES, StoredAnswer, read_stored_answers
from pipeline.context import RunContext, new_run_id
from pipeline.stage_task import LazyTables, Plan, UnitResult, publish, record_unchanged, run_unit
from pipeline.units import corpus_units, is_done, published_documents
from warehouse import Warehouse


@dataclass
class QueryRun:
    run_id: str
    qset: QuestionSet
    plans: dict[tuple[str, str], Plan]  # (variant, scope) -> plan
    warehouse: Warehouse
    settings: dict[tuple[str, str], Settings]  # (variant, scope) -> what its plan was built from
    results: list[UnitResult] = field(default_factory=list)
    seconds: float = 0.0
    flow_started: bool = False

    def table(self, name: str, variant: str = FULL.name, scope: str | None = None) -> pa.Table:
        """One output table of this question set under the (variant, scope) configuration."""
        scope = scope or next(s for v, s in self.plans if v == variant)
        plan = self.plans[(variant, scope)]
        stage = next(s for s in plan.stages if name in s.outputs)
        return self.warehouse.read_table(name, plan.fingerprints[stage.name], [self.qset.qset_id])

    def inputs(self, tables: Sequence[str], variant: str = FULL.name, scope: str | None = None) -> LazyTables:
        """`tables` as a query stage reads them for this question set under the (variant, scope)
        configuration: the set's own rows of a query stage's table, the corpus's of an ingest's."""
        scope = scope or next(s for v, s in self.plans if v == variant)
        plan = self.plans[(variant, scope)]
        return LazyTables.as_read_by(self.warehouse, plan, "question_set", self.qset.qset_id, tables)


def run_queries(
    root: Path,
    settings: Settings,
    qset: QuestionSet,
    scopes: list[str],
    variants: list[Variant] | None = None,
    force_from: str | None = None,
    use_prefect: bool = True,
    catalog: DocumentCatalog | None = None,
    **plan_options: Any,
) -> QueryRun:
    """`plan_options` go to `answer_plan` (ask: no evaluate, a streaming generator; the server: its
    `indexes`, loaded at start). `catalog`: the documents the names resolve against, when the
    caller holds them already (the server: read once per published ingest, not per question)."""
    started = time.perf_counter()
    wh = Warehouse(root)
    variants = variants or [FULL]
    # one loaded index for every variant and scope: they search the same corpus
    plan_options.setdefault("indexes", IndexHolder())
    configured = {(v.name, scope): _configure(settings, v, scope) for v in variants for scope in scopes}
    state = wh.current()  # one read: every plan of this run searches the same published snapshot
    plans = {key: answer_plan(wh, s, key[0] == FULL.name, state, **plan_options) for key, s in configured.items()}
    first = next(iter(plans.values()))
    check_ingested(wh, first)
    ingested = _document_fingerprints(first)
    for v in variants:  # a variant that changes a document stage (index settings) searches its own corpus
        plan = plans[(v.name, scopes[0])]
        if _document_fingerprints(plan) == ingested:
            continue  # the corpus check_ingested found
        if not (plan.corpus if plan.corpus is not None else corpus_units(wh, plan, state)):
            changes = ", ".join(f"{k}={val}" for k, val in v.overrides.items())
            raise InterleafError(
                f"variant {v.name!r} ({changes}) changes what is ingested: no document is stored under its "
                "fingerprints; ingest with those settings first (`interleaf --set KEY=VALUE ingest PATH...`)"
            )
    qset = scoped_question_set(qset, catalog or DocumentCatalog.of(wh), scopes)
    ctx = RunContext(new_run_id(), "answer", str(wh.root), settings, forced_from(first, force_from))
    run = QueryRun(ctx.run_id, qset, plans, wh, configured)
    todo = [
        p
        for p in plans.values()
        if any(ctx.forced(s.name) or not is_done(wh, s, p.fingerprints[s.name], qset.qset_id) for s in query_stages(p))
    ]
    if not todo:
        for plan in plans.values():
            record_unchanged(ctx, Plan(query_stages(plan), plan.fingerprints), [qset.qset_id])
    elif use_prefect:
        run.flow_started = True
        from flows.answer import answer_flow  # Prefect, imported by the commands that run a flow only

        ensure_prefect_api()
        run.results = answer_flow(ctx, todo, qset)
        if failed := [r for r in run.results if r.status == "failed"]:
            raise InterleafError(failed[0].reason or f"{failed[0].stage} failed")  # nothing published
    else:
        run.results = [
            run_unit(
                ctx, p, s.name, qset.qset_id, source=qset if s is p.entry("question_set") else None, path=qset.source
            )
            for p in todo
            for s in query_stages(p)
        ]
    for (variant, scope), plan in plans.items():
        # the full configuration's traces are what the views show; an ablation adds its scores only
        # (an ablation: the stage that scores, whose outputs the ablation table reads)
        only = (
            [s.name for s in query_stages(plan)] if variant == FULL.name else [plan.producers("eval_results")[0].name]
        )
        group = f"answer:{scope}" if variant == FULL.name else f"eval:{variant}:{scope}"
        publish(ctx, plan, group, only, unit=qset.qset_id)
    run.seconds = time.perf_counter() - started
    return run


def check_ingested(wh: Warehouse, plan: Plan) -> None:
    """Refuse to answer over a corpus the current configuration has not ingested: with nothing
    stored under its fingerprints, retrieval would search an empty index and say nothing about it.
    An ingest running now does not stop questions: they read what the last ingest published."""
    if plan.corpus if plan.corpus is not None else corpus_units(wh, plan):
        return
    if published_documents(wh) == set():
        raise InterleafError("no document is ingested: run `interleaf ingest PATH...`")
    raise InterleafError(
        "no document is ingested under the current configuration and code: run `interleaf ingest PATH...` "
        "(or `interleaf run --from parse` to redo the stored ones)"
    )


def _document_fingerprints(plan: Plan) -> list[str]:
    return [plan.fingerprints[s.name] for s in plan.stages if s.unit == "document"]


def _configure(settings: Settings, variant: Variant, scope: str) -> Settings:
    return Variant(variant.name, variant.overrides | {"retrieve.scope": scope}).apply(settings)


def forced_from(plan: Plan, stage: str | None) -> frozenset[str]:
    """`run --from STAGE` for a query stage: that stage and every query stage after it."""
    if stage is None:
        return frozenset()
    names = [s.name for s in query_stages(plan)]
    if stage not in names:
        raise ValueError(f"unknown stage {stage!r}; the answer flow's stages are {', '.join(names)}")
    return frozenset(names[names.index(stage) :])


def recall_summary(run: QueryRun) -> list[dict[str, object]]:
    """Per (variant, scope): recall by evidence group and k, counts, and the evidence missed at
    the largest budget (the `eval --json` shape)."""
    out = []
    for variant, scope in run.plans:
        rows = run.table("eval_results", variant, scope).to_pylist()
        evidence = run.table("eval_evidence", variant, scope).to_pylist()
        top = max((r["budget"] for r in evidence), default=0)
        recall: dict[str, dict[str, float]] = {}
        n: dict[str, int] = {}
        for r in rows:
            recall.setdefault(r["modality"], {})[str(r["k"])] = r["recall"]
            n[r["modality"]] = r["n_evidence"]
        misses = [
            {"question": e["question_id"], "evidence": e["evidence_idx"], "group": e["modality"]}
            | {"findable": e["matching_quotes"] > 0}
            for e in evidence
            if e["budget"] == top and e["rank"] is None
        ]
        out.append({"variant": variant, "scope": scope, "n": n, "recall": recall, "misses": misses})
    return out


def explain_tables(run: QueryRun, scope: str, variant: str = FULL.name) -> dict[str, pa.Table]:
    """What `interleaf eval --explain` reads: the run's retrieval outputs and what they were over."""
    given = run.inputs(("questions", "documents", "quotes", "quote_texts", "index_texts"), variant, scope)
    over = {t: given[t] for t in ("questions", "documents", "quotes", "quote_texts", "index_texts")}
    return over | {t: run.table(t, variant, scope) for t in ("hits", "asked_clauses", "contexts")}


def stored_question_sets(root: Path) -> list[QuestionSet]:
    """Every question set the views show, rebuilt from its stored rows (its file may be gone)."""
    from warehouse.catalog import connect

    con = connect(Warehouse(root))
    try:
        rows = con.sql("SELECT * FROM questions ORDER BY qset_id, question_id").to_arrow_table().to_pylist()
    finally:
        con.close()
    sets: dict[str, list[dict]] = {}
    for r in rows:
        sets.setdefault(r["qset_id"], []).append(r)
    keep = ("question_id", "question", "doc_name", "answer", "evidence_json", "question_type")
    keep += ("must_include", "answerable", "cross_page", "answer_format", "doc_type")
    return [
        QuestionSet(qset_id, rs[0]["source"], [{k: r[k] for k in keep} for r in rs]) for qset_id, rs in sets.items()
    ]


def stored_answers_of(run: QueryRun, scope: str, variant: str = FULL.name) -> list[StoredAnswer]:
    """The run's stored answers, through the one reader (interleaf/stored_answers.py)."""
    given = run.inputs([t for t in TABLES if t not in ("answers", "citations")], variant, scope)
    tables = {t: given[t] for t in given}
    tables |= {t: run.table(t, variant, scope) for t in ("answers", "citations")}
    return read_stored_answers(tables, run.settings[(variant, scope)].generate)


def answer_views(run: QueryRun, scope: str, variant: str = FULL.name) -> list[AnswerView]:
    """Every stored answer of the run as the renderers take it: its context quotes, its checked
    citations as stored, crops and pages."""
    from interleaf.render import AnswerView, PdfPages

    documents = run.inputs(("documents",), variant, scope)["documents"]
    pages = PdfPages({d["doc_id"]: d["path"] for d in documents.select(["doc_id", "path"]).to_pylist()})
    root = run.warehouse.root
    return [
        AnswerView(
            question_id=a.question_id,
            question=a.question,
            checked=a.checked,
            quotes=a.context,
            generator=a.generator,
            model=a.model,
            seconds=a.seconds,
            error=a.error,
            load_image=lambda img_path: (root / img_path).read_bytes(),
            load_page=pages,
            short_answer=a.short_answer,
        )
        for a in stored_answers_of(run, scope, variant)
    ]


def answered_of(run: QueryRun, scope: str, variant: str = FULL.name) -> list[Answered]:
    """The run's answered questions with their gold quotes, as the evaluate stage scores them."""
    from interleaf.evaluate.answers import answered_questions
    from interleaf.evaluate.stage import evidence_corpus

    t = run.inputs(("documents", "quotes", "quote_texts", "questions"), variant, scope)
    names = {d["name"]: d["doc_id"] for d in t["documents"].select(["name", "doc_id"]).to_pylist()}
    corpus = evidence_corpus(t["quotes"], t["quote_texts"])
    return answered_questions(t["questions"].to_pylist(), stored_answers_of(run, scope, variant), corpus, names)
