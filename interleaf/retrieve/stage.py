"""Retrieve stage, pure given a loaded index: questions -> clauses -> hits -> fused ranking -> contexts.

Every (retriever, clause) pair keeps its own ranked hits, so recall can be traced to the clause
and the retriever that found a quote. Fusion is weighted RRF; an optional reranker re-orders the
fused head; an optional LMM filter drops the head's image quotes a VLM judges unable to answer
(lmm_filter.py, V-RAG); modality quotas cut the context (MMDocRAG §4.8: 20 quotes = 8 images + 12 texts).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Clause, Expander
from interleaf.text.tokens import tokenize
from interleaf.index.stage import LoadedIndex
from interleaf.retrieve.config import RetrieveConfig
from interleaf.retrieve.fusion import Hit, apply_quota, page_fusion, rrf
from interleaf.retrieve.lmm_filter import ImageLoader, filter_ranking
from interleaf.retrieve.protocol import ImageFilter, Reranker, Verdict


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    doc_id: str | None = None  # the document a doc-scoped question is asked about


@dataclass
class QuestionResult:
    question: Question
    clauses: list[Clause]
    hits: list[Hit]
    ranking: list[tuple[str, float]]  # fused (and reranked) quote ids, best first
    contexts: dict[int, list[tuple[str, float]]] = field(default_factory=dict)  # budget -> context
    verdicts: list[Verdict] = field(default_factory=list)  # LMM filter, on the head's image quotes


def quota_for(config: RetrieveConfig, budget: int) -> tuple[int, int]:
    if budget in config.quotas:
        return config.quotas[budget]
    images = round(budget * 8 / 20)  # the 20 = 8 + 12 split, scaled
    return images, budget - images


def _search(
    index: LoadedIndex, texts: list[str], masks: list[np.ndarray], depth: int, names: list[str], first: list[bool]
) -> dict[str, dict[int, list[tuple[int, float]]]]:
    """Per retriever, per query text it is asked: the top `depth` (position, score) within its mask.

    A retriever configured with `clauses: question` is asked the question clause only (`first`)."""
    out: dict[str, dict[int, list[tuple[int, float]]]] = {}
    for name in names:
        retriever = index.retrievers[name]
        asked = [i for i in range(len(texts)) if first[i] or name not in index.question_only]
        scores = retriever.scores([texts[i] for i in asked]) if asked else np.zeros((0, len(index.corpus)))
        lexical = retriever.kind == "bm25"
        per_query: dict[int, list[tuple[int, float]]] = {}
        for i, row in zip(asked, scores, strict=True):
            mask = masks[i]
            row = np.where(mask, row, -np.inf)
            k = min(depth, int(mask.sum()))
            if k <= 0:
                per_query[i] = []
                continue
            top = np.argpartition(-row, k - 1)[:k]
            top = top[np.argsort(-row[top], kind="stable")]
            # a retriever that has nothing to say (BM25 with no shared term, a visual one on text) adds no hit
            keep = np.isfinite(row[top]) & (row[top] > -1e8) & ((row[top] > 0) if lexical else True)
            per_query[i] = [(int(j), float(row[j])) for j in top[keep]]
        out[name] = per_query
    return out


def prf_clause(
    index: LoadedIndex, question: str, ranking: list[tuple[str, float]], config: ExpandConfig
) -> Clause | None:
    """Pseudo-relevance feedback: the most frequent new terms of the first pass's top quotes."""
    pos = {q: i for i, q in enumerate(index.corpus.quote_ids)}
    seen = set(tokenize(question))
    counts: Counter[str] = Counter()
    for quote_id, _ in ranking[: config.prf_docs]:
        counts.update(t for t in tokenize(index.corpus.texts[pos[quote_id]]) if t not in seen and len(t) > 2)
    terms = [t for t, _ in counts.most_common(config.prf_terms)]
    return Clause(" ".join(terms), "prf", config.weights.get("prf", 0.3)) if terms else None


def retrieve(
    index: LoadedIndex,
    questions: list[Question],
    expander: Expander | None,
    config: RetrieveConfig,
    expand_config: ExpandConfig,
    reranker: Reranker | None = None,
    retrievers: list[str] | None = None,
    scope: str | None = None,
    image_filter: ImageFilter | None = None,
    load_image: ImageLoader | None = None,
) -> list[QuestionResult]:
    scope = scope or config.scope
    names = retrievers or list(index.retrievers)
    clauses = [
        expander.expand(q.text) if expander is not None else [Clause(q.text.strip(), "question", 1.0)]
        for q in questions
    ]
    masks = [index.doc_mask(q.doc_id if scope == "doc" else None) for q in questions]
    results = _run(index, questions, clauses, masks, names, config)
    if expand_config.prf and expander is not None:
        extra = [prf_clause(index, q.text, r.ranking, expand_config) for q, r in zip(questions, results, strict=True)]
        clauses = [cs + ([c] if c else []) for cs, c in zip(clauses, extra, strict=True)]
        results = _run(index, questions, clauses, masks, names, config)
    for r in results:
        if reranker is not None:
            r.ranking = rerank(index, r.question.text, r.ranking, reranker, config)
        if image_filter is not None:  # V-RAG's LMM filter: image quotes judged "no" leave before the quotas
            r.ranking, r.verdicts = filter_ranking(
                index, r.question.text, r.ranking, image_filter, load_image, config.lmm_filter
            )
        modality = {q: index.modalities[index_pos] for index_pos, q in _positions(index, r.ranking)}
        r.contexts = {b: apply_quota(r.ranking, modality, b, quota_for(config, b)) for b in config.budgets}
    return results


def _positions(index: LoadedIndex, ranking: list[tuple[str, float]]) -> list[tuple[int, str]]:
    pos = index.position
    return [(pos[q], q) for q, _ in ranking]


def _run(
    index: LoadedIndex,
    questions: list[Question],
    clauses: list[list[Clause]],
    masks: list[np.ndarray],
    names: list[str],
    config: RetrieveConfig,
) -> list[QuestionResult]:
    texts = [c.text for cs in clauses for c in cs]
    flat_masks = [m for m, cs in zip(masks, clauses, strict=True) for _ in cs]
    first = [cid == 0 for cs in clauses for cid in range(len(cs))]
    found = _search(index, texts, flat_masks, config.depth, names, first)
    results, offset = [], 0
    for q, cs in zip(questions, clauses, strict=True):
        hits = [
            Hit(cid, name, index.corpus.quote_ids[p], rank, s)
            for name in names
            for cid in range(len(cs))
            for rank, (p, s) in enumerate(found[name].get(offset + cid, []), start=1)
        ]
        offset += len(cs)
        ranking = rrf(hits, index.weights, {i: c.weight for i, c in enumerate(cs)}, config.rrf_k, config.clause_fusion)
        ranking = page_fusion(ranking, index.page_of, config.rrf_k, config.page_weight, config.depth)
        results.append(QuestionResult(q, cs, hits, ranking))
    return results


def rerank(
    index: LoadedIndex, query: str, ranking: list[tuple[str, float]], reranker: Reranker, config: RetrieveConfig
) -> list[tuple[str, float]]:
    """Re-order the fused head; the blend of both ranks (RRF over two lists) keeps a strong fused
    hit from being sunk by one reranker mistake."""
    head, tail = ranking[: config.rerank.top_n], ranking[config.rerank.top_n :]
    if not head:
        return ranking
    pos = index.position
    scores = reranker.score(query, [index.corpus.texts[pos[q]] for q, _ in head])
    by_rerank = {
        q: r for r, (q, _) in enumerate(sorted(zip([q for q, _ in head], scores, strict=True), key=lambda x: -x[1]), 1)
    }
    k, w = config.rrf_k, config.rerank.blend
    blended = [(q, (1 - w) / (k + i) + w / (k + by_rerank[q])) for i, (q, _) in enumerate(head, start=1)]
    blended.sort(key=lambda x: -x[1])
    floor = min(s for _, s in blended)
    return blended + [(q, min(s, floor) * 0.999) for q, s in tail]
