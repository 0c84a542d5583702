"""`interleaf eval`: expand -> retrieve -> (rerank) over the ingested corpus, recall@k per scope.

Query-time work, no Prefect: each run writes its clauses, hits, contexts and recall rows to the
warehouse under the `eval` folder, one part per run, variant and scope.
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
from interleaf.retrieve.protocol import Reranker
from interleaf.retrieve.registry import get_reranker
from interleaf.retrieve.stage import Question, QuestionResult, retrieve
from tasks.context import new_run_id
from tasks.index_task import open_index
from warehouse import Warehouse, schemas
from warehouse.catalog import query

EVAL = "eval"
EVAL_TABLES = ("clauses", "hits", "contexts", "eval_results")


@dataclass
class Variant:
    name: str
    retrievers: list[str] | None = None  # None: every configured one
    expand: bool = True
    rerank: bool = True


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
) -> tuple[EvalResult, list[QuestionResult]]:
    questions = [Question(i.id, i.question, names.get(i.doc)) for i in items]
    expander = get_expander(settings.expand) if variant.expand else None
    results = retrieve(
        index,
        questions,
        expander,
        settings.retrieve,
        settings.expand,
        reranker if variant.rerank else None,
        retrievers=variant.retrievers,
        scope=scope,
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


def _rows(run_id: str, scope: str, results: list[QuestionResult], index: LoadedIndex) -> dict[str, pa.Table]:
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
    return {
        "clauses": pa.Table.from_pylist(clauses, schema=schemas.CLAUSES),
        "hits": pa.Table.from_pylist(hits, schema=schemas.HITS),
        "contexts": pa.Table.from_pylist(contexts, schema=schemas.CONTEXTS),
    }


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
    out = []
    for variant in variants or [Variant("full")]:
        for scope in scopes:
            result, results = evaluate(index, settings, items, names, scope, variant, reranker)
            part = f"{run_id}__{variant.name}__{scope}"
            if variant.name == "full":  # the traces of ablation variants would only repeat these
                for table, data in _rows(run_id, scope, results, index).items():
                    wh.write_part(table, EVAL, part, data)
            wh.write_part("eval_results", EVAL, part, _recall_rows(run_id, result, str(qa_path)))
            out.append(result)
    wh.set_current(EVAL, EVAL, EVAL_TABLES)
    return run_id, out


def ablation_variants(settings: Settings) -> list[Variant]:
    """Each retriever alone (no expansion, no rerank), then the fusion without / with each step."""
    names = [r.name for r in settings.index.retrievers]
    variants = [Variant(f"{n} alone", [n], expand=False, rerank=False) for n in names]
    variants += [Variant(f"{n} + expansion", [n], expand=True, rerank=False) for n in names]
    variants += [
        Variant("fused, no expansion, no rerank", None, expand=False, rerank=False),
        Variant("fused + expansion", None, expand=True, rerank=False),
        Variant("fused + rerank", None, expand=False, rerank=True),
        Variant("full", None, expand=True, rerank=True),
    ]
    return variants
