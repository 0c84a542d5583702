"""`interleaf eval`: expand -> retrieve -> (rerank) -> (LMM filter) over the ingested corpus, recall@k per scope.

Query-time work, no Prefect: each run writes its clauses, hits, contexts, LMM filter verdicts (when
`retrieve.lmm_filter.enabled`) and recall rows to the warehouse under the `eval` folder, one part per
run, variant and scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from interleaf.config import Settings
from interleaf.evaluate.recall import QAItem, counts, outcomes, read_qa, recall_table
from interleaf.expand.registry import get_expander
from interleaf.index.stage import LoadedIndex
from interleaf.retrieve.lmm_filter import ImageLoader
from interleaf.retrieve.protocol import ImageFilter, Reranker
from interleaf.retrieve.registry import get_image_filter, get_reranker
from interleaf.retrieve.stage import Question, QuestionResult, retrieve
from tasks.context import new_run_id
from tasks.index_task import open_index
from warehouse import Warehouse, schemas
from warehouse.catalog import query

EVAL = "eval"
EVAL_TABLES = ("clauses", "hits", "contexts", "image_verdicts", "eval_results")


@dataclass
class Variant:
    name: str
    retrievers: list[str] | None = None  # None: every configured one
    expand: bool = True
    rerank: bool = True
    page_fusion: bool = True  # applied only when `retrieve.page_weight` > 0
    lmm_filter: bool = True  # applied only when `retrieve.lmm_filter.enabled`


@dataclass
class EvalResult:
    variant: str
    scope: str
    recall: dict[str, dict[int, float]]
    n: dict[str, int]
    misses: list[dict[str, Any]] = field(default_factory=list)


def doc_ids_by_name(wh: Warehouse) -> dict[str, str]:
    _, rows = query(wh, "SELECT name, doc_id FROM documents")
    return dict(rows)


def evaluate(
    index: LoadedIndex,
    settings: Settings,
    items: list[QAItem],
    names: dict[str, str],
    scope: str,
    variant: Variant,
    reranker: Reranker | None,
    image_filter: ImageFilter | None = None,
    load_image: ImageLoader | None = None,
) -> tuple[EvalResult, list[QuestionResult]]:
    questions = [Question(i.id, i.question, names.get(i.doc)) for i in items]
    expander = get_expander(settings.expand) if variant.expand else None
    results = retrieve(
        index,
        questions,
        expander,
        settings.retrieve if variant.page_fusion else settings.retrieve.model_copy(update={"page_weight": 0.0}),
        settings.expand,
        reranker if variant.rerank else None,
        retrievers=variant.retrievers,
        scope=scope,
        image_filter=image_filter if variant.lmm_filter else None,
        load_image=load_image,
    )
    contexts = {r.question.id: {b: [q for q, _ in ctx] for b, ctx in r.contexts.items()} for r in results}
    outs = outcomes(index.corpus, items, names, contexts)
    budgets = settings.retrieve.budgets
    misses = [
        {"question": o.question_id, "evidence": o.evidence_idx, "group": o.group, "findable": bool(o.matches)}
        for o in outs
        if o.first_rank.get(max(budgets)) is None
    ]
    return EvalResult(variant.name, scope, recall_table(outs, budgets), counts(outs), misses), results


def image_loader(root: Path) -> ImageLoader:
    """Crops by their `img_path`, relative to the warehouse root (the retrieve stage does no I/O)."""
    return lambda img_path: (root / img_path).read_bytes()


def _verdict_rows(run_id: str, scope: str, results: list[QuestionResult], image_filter: ImageFilter) -> pa.Table:
    rows = [
        {
            "run_id": run_id,
            "question_id": r.question.id,
            "scope": scope,
            "quote_id": v.quote_id,
            "keep": v.keep,
            "p_yes": v.p_yes,
            "backend": image_filter.name,
            "model": image_filter.model,
            "prompt_hash": image_filter.prompt_hash,
            "error": v.error,
        }
        for r in results
        for v in r.verdicts
    ]
    return pa.Table.from_pylist(rows, schema=schemas.IMAGE_VERDICTS)


def _rows(
    run_id: str, scope: str, results: list[QuestionResult], index: LoadedIndex, image_filter: ImageFilter | None = None
) -> dict[str, pa.Table]:
    pos = index.position
    clauses, hits, contexts = [], [], []
    for r in results:
        qid = r.question.id
        clauses += [
            {
                "run_id": run_id,
                "question_id": qid,
                "clause_id": i,
                "text": c.text,
                "kind": c.kind,
                "weight": c.weight,
                "expander": c.kind,
            }
            for i, c in enumerate(r.clauses)
        ]
        hits += [
            {
                "run_id": run_id,
                "question_id": qid,
                "clause_id": h.clause_id,
                "retriever": h.retriever,
                "scope": scope,
                "quote_id": h.quote_id,
                "rank": h.rank,
                "score": h.score,
            }
            for h in r.hits
        ]
        for budget, ctx in r.contexts.items():
            for p, (q, s) in enumerate(ctx, start=1):
                i = pos[q]
                contexts.append(
                    {
                        "run_id": run_id,
                        "question_id": qid,
                        "scope": scope,
                        "budget": budget,
                        "position": p,
                        "quote_id": q,
                        "doc_id": index.corpus.doc_ids[i],
                        "page_idx": index.corpus.page_idx[i],
                        "modality": index.modalities[i],
                        "score": s,
                    }
                )
    tables = {
        "clauses": pa.Table.from_pylist(clauses, schema=schemas.CLAUSES),
        "hits": pa.Table.from_pylist(hits, schema=schemas.HITS),
        "contexts": pa.Table.from_pylist(contexts, schema=schemas.CONTEXTS),
    }
    if image_filter is not None:
        tables["image_verdicts"] = _verdict_rows(run_id, scope, results, image_filter)
    return tables


def _recall_rows(run_id: str, result: EvalResult, qa: str) -> pa.Table:
    now = datetime.now(UTC)
    rows = [
        {
            "run_id": run_id,
            "variant": result.variant,
            "scope": result.scope,
            "modality": group,
            "k": k,
            "recall": value,
            "n_evidence": result.n[group],
            "qa_file": qa,
            "created_at": now,
        }
        for group, by_k in result.recall.items()
        for k, value in by_k.items()
    ]
    return pa.Table.from_pylist(rows, schema=schemas.EVAL_RESULTS)


def run_eval(
    root: Path, settings: Settings, qa_path: str, scopes: list[str], variants: list[Variant] | None = None
) -> tuple[str, list[EvalResult]]:
    wh = Warehouse(root)
    run_id = new_run_id()
    items = read_qa(qa_path)
    names = doc_ids_by_name(wh)
    index = open_index(wh, settings.index)
    reranker = get_reranker(settings.retrieve.rerank)
    image_filter = get_image_filter(settings.retrieve.lmm_filter)  # None unless enabled
    load_image = image_loader(wh.root)
    out = []
    for variant in variants or [Variant("full")]:
        for scope in scopes:
            result, results = evaluate(
                index, settings, items, names, scope, variant, reranker, image_filter, load_image
            )
            part = f"{run_id}__{variant.name}__{scope}"
            if variant.name == "full":  # the traces of ablation variants would only repeat these
                for table, data in _rows(run_id, scope, results, index, image_filter).items():
                    wh.write_part(table, EVAL, part, data)
            wh.write_part("eval_results", EVAL, part, _recall_rows(run_id, result, str(qa_path)))
            out.append(result)
    wh.set_current(EVAL, EVAL, EVAL_TABLES)
    return run_id, out


def ablation_variants(settings: Settings) -> list[Variant]:
    """Each retriever alone (its own ranking: no expansion, no page fusion, no rerank), then the
    fusion with each step alone, then the whole pipeline.

    The LMM filter, when enabled, runs in `full` only, plus a `full, no LMM filter` beside it."""
    names = [r.name for r in settings.index.retrievers]
    bare = {"page_fusion": False, "rerank": False, "lmm_filter": False}
    variants = [Variant(f"{n} alone", [n], expand=False, **bare) for n in names]
    variants += [Variant(f"{n} + expansion", [n], expand=True, **bare) for n in names]
    variants += [
        Variant("fused, no expansion, no rerank", None, expand=False, **bare),
        Variant("fused + expansion", None, expand=True, **bare),
        Variant("fused + page fusion", None, expand=False, **(bare | {"page_fusion": True})),
        Variant("fused + rerank", None, expand=False, **(bare | {"rerank": True})),
    ]
    if settings.retrieve.lmm_filter.enabled:
        variants.append(Variant("full, no LMM filter", None, lmm_filter=False))
    variants.append(Variant("full"))
    return variants
