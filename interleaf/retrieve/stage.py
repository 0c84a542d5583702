"""Retrieve stage, pure given a loaded index: questions -> clauses -> hits -> fused ranking -> contexts.

Every (retriever, clause) pair keeps its own ranked hits, so recall can be traced to the clause
and the retriever that found a quote. Fusion is weighted RRF; an optional reranker re-orders the
fused head; a question asking for a quantity lifts the head's quotes dense in numbers; pages take
turns in the head's first quotes; an optional LMM filter drops the head's image quotes a VLM judges unable to answer
(lmm_filter.py, V-RAG); modality quotas cut the context (MMDocRAG §4.8: 20 quotes = 8 images + 12 texts).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from interleaf.errors import WarehouseWriteError
from interleaf.expand.config import ExpandConfig
from interleaf.expand.instructions import wants_quantity
from interleaf.expand.protocol import Clause
from interleaf.expand.stage import clauses_by_question
from interleaf.fingerprint import canonical_json
from interleaf.index.config import IndexConfig
from interleaf.index.registry import retriever_class
from interleaf.prompts import load_prompt
from interleaf.retrieve import snapshot
from interleaf.retrieve.config import RetrieveConfig
from interleaf.retrieve.fusion import Hit, apply_quota, number_share, numbers_lift, page_fusion, pages_take_turns, rrf
from interleaf.retrieve.lmm_filter import ImageLoader, filter_ranking
from interleaf.retrieve.loaded_index import IndexHolder, LoadedIndex, load_index, rows_of_retrievers
from interleaf.retrieve.protocol import ImageFilter, Reranker, Verdict
from interleaf.retrieve.registry import get_image_filter, get_reranker
from interleaf.retrieve.scoping import SCOPED, named_page_masks, named_pages_first, reference_scopes, scope_mask
from interleaf.stage import StageInput, StageOutput
from interleaf.structure import RETRIEVE_MODULES
from interleaf.structure.pages import page_references, printed_page_numbers
from interleaf.text.tokens import tokenize
from warehouse import Warehouse, schemas

STAGE = "retrieve"


# upstream stages of the question side: the loaded index does not depend on them
QUESTION_SIDE = ("questions", "expand")


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    doc_ids: tuple[str, ...] = ()  # the documents a doc-scoped question is asked about (interleaf/scope.py)


@dataclass
class QuestionResult:
    question: Question
    clauses: list[Clause]  # every clause asked: expand's, the PRF clause, the question within each named section
    hits: list[Hit]
    ranking: list[tuple[str, float]]  # fused (and reranked) quote ids, best first
    contexts: dict[int, list[tuple[str, float]]] = field(default_factory=dict)  # budget -> context
    verdicts: list[Verdict] = field(default_factory=list)  # LMM filter, on the head's image quotes
    clause_sizes: list[int] = field(default_factory=list)  # quotes each clause was asked among


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
        distinct = list(dict.fromkeys(texts[i] for i in asked))  # a scoped clause may repeat the question
        scored = retriever.scores(distinct) if distinct else np.zeros((0, len(index.corpus)))
        row_of = dict(zip(distinct, scored, strict=True))
        scores = [row_of[texts[i]] for i in asked]
        lexical = retriever.lexical
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
    return Clause(" ".join(terms), "prf", config.weights.prf) if terms else None


def retrieve(
    index: LoadedIndex,
    questions: list[Question],
    clauses: list[list[Clause]],
    config: RetrieveConfig,
    expand_config: ExpandConfig,
    reranker: Reranker | None = None,
    image_filter: ImageFilter | None = None,
    load_image: ImageLoader | None = None,
    printed: Mapping[str, Mapping[int, set[int]]] | None = None,
) -> list[QuestionResult]:
    """`clauses[i]` are question i's expanded clauses (clause 0 the question itself); `printed`: the
    page numbers each document prints (structure.pages.printed_page_numbers)."""
    names = config.retrievers or list(index.retrievers)
    unknown = [n for n in names if n not in index.retrievers]
    if unknown:
        raise ValueError(f"retrieve.retrievers names {unknown}; the index has {list(index.retrievers)}")
    doc_scoped = config.scope == "doc"
    masks = [scope_mask(index, q.doc_ids if doc_scoped else ()) for q in questions]
    # the quotes of each page a question names (document scope): searched within, and put first
    on_pages = [
        named_page_masks(index, q.text, q.doc_ids, m, printed) if doc_scoped else []
        for q, m in zip(questions, masks, strict=True)
    ]
    scoped = [
        reference_scopes(index, q.text, q.doc_ids, m, doc_scoped, config, named)
        for q, m, named in zip(questions, masks, on_pages, strict=True)
    ]
    results = _run(index, questions, clauses, masks, names, config, scoped)
    if expand_config.prf and expand_config.backend != "none":
        extra = [prf_clause(index, q.text, r.ranking, expand_config) for q, r in zip(questions, results, strict=True)]
        clauses = [cs + ([c] if c else []) for cs, c in zip(clauses, extra, strict=True)]
        results = _run(index, questions, clauses, masks, names, config, scoped)
    for r, named in zip(results, on_pages, strict=True):
        if reranker is not None:
            r.ranking = rerank(index, r.question.text, r.ranking, reranker, config)
        if config.number_weight and wants_quantity(r.question.text):
            head = r.ranking[: config.rerank.top_n]
            share = {q: number_share(index.corpus.texts[index.position[q]]) for q, _ in head}
            r.ranking = numbers_lift(r.ranking, share, config.rerank.top_n, config.rrf_k, config.number_weight)
        r.ranking = pages_take_turns(r.ranking, index.page_of, config.pages_take_turns)
        if config.named_pages_first and named:
            r.ranking = named_pages_first(index, r.ranking, np.logical_or.reduce([m for _, m in named]))
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
    scoped: list[list[tuple[Clause, np.ndarray]]],
) -> list[QuestionResult]:
    clause_masks = [[m] * len(cs) + [sm for _, sm in sc] for m, cs, sc in zip(masks, clauses, scoped, strict=True)]
    clauses = [cs + [c for c, _ in sc] for cs, sc in zip(clauses, scoped, strict=True)]
    texts = [c.text for cs in clauses for c in cs]
    flat_masks = [m for ms in clause_masks for m in ms]
    # a scoped clause is the question asked elsewhere: every retriever is asked it
    first = [cid == 0 or c.kind.startswith(SCOPED) for cs in clauses for cid, c in enumerate(cs)]
    found = _search(index, texts, flat_masks, config.depth, names, first)
    results, offset = [], 0
    for q, cs, ms in zip(questions, clauses, clause_masks, strict=True):
        hits = [
            Hit(cid, name, index.corpus.quote_ids[p], rank, s)
            for name in names
            for cid in range(len(cs))
            for rank, (p, s) in enumerate(found[name].get(offset + cid, []), start=1)
        ]
        offset += len(cs)
        ranking = rrf(hits, index.weights, {i: c.weight for i, c in enumerate(cs)}, config.rrf_k, config.clause_fusion)
        ranking = page_fusion(ranking, index.page_of, config.rrf_k, config.page_weight, config.depth)
        # the same one level up: a section holding several strong hits lifts its other quotes
        ranking = page_fusion(ranking, index.scopes.section_of, config.rrf_k, config.section_weight, config.depth)
        results.append(QuestionResult(q, cs, hits, ranking, clause_sizes=[int(m.sum()) for m in ms]))
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


def questions_of(questions: pa.Table) -> list[Question]:
    return [
        Question(q["question_id"], q["question"], tuple(q["doc_ids"] or ()))
        for q in questions.select(["question_id", "question", "doc_ids"]).to_pylist()
    ]


class RetrieveStage:
    """Questions and their clauses -> hits per retriever and clause, LMM verdicts, contexts."""

    name = STAGE
    unit = "question_set"
    page_work = False
    # and the tables its retrievers' rows are in (index_texts, quote_embeddings: `Retriever.table`)
    inputs: tuple[str, ...] = ("questions", "clauses", "documents", "quotes", "sections", "quote_texts")
    outputs = ("hits", "asked_clauses", "image_verdicts", "contexts")
    sources = (
        "interleaf.retrieve",
        "interleaf.index",
        *RETRIEVE_MODULES,
        "interleaf.evidence",
        "interleaf.text",
        "interleaf.kinds",
        "interleaf.vlm",
    )
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(
        self,
        config: RetrieveConfig,
        index_config: IndexConfig,
        expand_config: ExpandConfig,
        indexes: IndexHolder | None = None,
    ) -> None:
        """`indexes`: where the loaded index is kept; share one across the stages (and runs) that
        search the same corpus (eval's variants, the server); by default this stage keeps its own."""
        self.settings, self.index_config, self.expand_config = config, index_config, expand_config
        self.indexes = indexes if indexes is not None else IndexHolder()
        index_stages = tuple(f"index:{r.name}" for r in index_config.retrievers)
        tables = ("index_texts", *(retriever_class(r.kind).table for r in index_config.retrievers))
        self.inputs = tuple(dict.fromkeys((*RetrieveStage.inputs, *tables)))
        self.upstream = ("questions", "expand", "parse", "describe", *index_stages, "corpus")

    def config(self) -> dict[str, Any]:
        return {
            "retrieve": self.settings.model_dump(),
            # how retrievers are weighted and asked changes the ranking, not the stored index
            "retrievers": [r.model_dump(include={"name", "weight", "clauses"}) for r in self.index_config.retrievers],
            "prf": self.expand_config.model_dump(include={"prf", "prf_docs", "prf_terms", "weights"}),
        }

    def prompt_hashes(self) -> list[str]:
        f = self.settings.lmm_filter
        return [load_prompt(f.prompt).hash] if f.enabled else []

    def version(self) -> dict[str, str]:
        out = {}
        if self.settings.rerank.model:
            out["reranker"] = self.settings.rerank.model
        f = self.settings.lmm_filter
        if f.enabled:
            out["lmm_filter"] = getattr(f, f.backend).model
        return out

    def load_index(self, given: StageInput) -> LoadedIndex:
        """The index over the corpus `given` names (its upstream fingerprints): the holder's when it
        holds that one, else read from the stored rows and built, replacing the one it held."""
        wh = Warehouse(given.root)
        corpus = {k: v for k, v in given.upstream.items() if k not in QUESTION_SIDE}

        def build(from_snapshot: bool = True) -> LoadedIndex:
            # the snapshot the ingest stored for this corpus (interleaf/retrieve/snapshot.py), else built
            key = snapshot.snapshot_key(canonical_json({"corpus": corpus, "index": self.index_config.model_dump()}))
            stored = snapshot.load(wh, key) if from_snapshot else None
            if stored is not None:
                return stored
            if not from_snapshot:
                snapshot.set_aside(wh, key)
            t = given.tables
            rows = rows_of_retrievers(self.index_config, t)
            index = load_index(
                self.index_config, t["quotes"], t["documents"], t["quote_texts"], rows, sections=t["sections"]
            )
            with contextlib.suppress(WarehouseWriteError):  # a saving: a full disk costs the next load a build
                snapshot.save(wh, key, index)
            return index

        # the index as this configuration weights and asks its retrievers (not in the upstream
        # fingerprints: an eval variant that weights a retriever otherwise would get the held one)
        held = canonical_json({"upstream": given.upstream, "index": self.index_config.model_dump()})
        index = self.indexes.get(held, build)
        if index.ready():
            return index
        # the snapshot's bytes are damaged (its digest, checked beside the load, did not match):
        # set aside, and the index built from the stored rows
        self.indexes.clear()
        index = self.indexes.get(held, lambda: build(from_snapshot=False))
        index.ready()  # its encoders: an index built from rows has no digest to wait for
        return index

    def run(self, given: StageInput) -> StageOutput:
        index = self.load_index(given)
        t = given.tables
        questions = questions_of(t["questions"])
        by_question = clauses_by_question(t["clauses"])
        clauses = [by_question.get(q.id) or [Clause(q.text, "question", 1.0)] for q in questions]
        image_filter = get_image_filter(self.settings.lmm_filter)
        # the page numbers printed in the documents of the questions that name a page (doc scope)
        doc_scoped = self.settings.scope == "doc"
        naming = {d for q in questions if doc_scoped and page_references(q.text) for d in q.doc_ids}
        results = retrieve(
            index,
            questions,
            clauses,
            self.settings,
            self.expand_config,
            get_reranker(self.settings.rerank),
            image_filter,
            lambda img_path: (given.root / img_path).read_bytes(),
            printed_page_numbers(t["quotes"], naming) if naming else None,
        )
        return StageOutput(result_tables(given.unit, self.settings.scope, results, index, image_filter))


def result_tables(
    qset_id: str, scope: str, results: list[QuestionResult], index: LoadedIndex, image_filter: ImageFilter | None
) -> dict[str, pa.Table]:
    key = {"qset_id": qset_id, "scope": scope}
    hits = [
        key
        | {"question_id": r.question.id, "clause_id": h.clause_id, "retriever": h.retriever}
        | {"quote_id": h.quote_id, "rank": h.rank, "score": h.score}
        for r in results
        for h in r.hits
    ]
    asked = [
        {"qset_id": qset_id, "question_id": r.question.id, "scope": scope, "clause_id": cid}
        | {"text": c.text, "kind": c.kind, "weight": c.weight, "n_quotes": n}
        for r in results
        for cid, (c, n) in enumerate(zip(r.clauses, r.clause_sizes, strict=True))
    ]
    verdicts = [
        key
        | {"question_id": r.question.id, "quote_id": v.quote_id, "keep": v.keep, "p_yes": v.p_yes}
        | {"backend": image_filter.name, "model": image_filter.model, "prompt_hash": image_filter.prompt_hash}
        | {"error": v.error}
        for r in results
        for v in r.verdicts
        if image_filter is not None
    ]
    contexts = []
    for r in results:
        for budget, ctx in r.contexts.items():
            for position, (q, s) in enumerate(ctx, start=1):
                i = index.position[q]
                contexts.append(
                    key
                    | {"question_id": r.question.id, "budget": budget, "position": position, "quote_id": q}
                    | {"doc_id": index.corpus.doc_ids[i], "page_idx": index.corpus.page_idx[i]}
                    | {"modality": index.modalities[i], "score": s}
                )
    return {
        "hits": pa.Table.from_pylist(hits, schema=schemas.HITS),
        "asked_clauses": pa.Table.from_pylist(asked, schema=schemas.ASKED_CLAUSES),
        "image_verdicts": pa.Table.from_pylist(verdicts, schema=schemas.IMAGE_VERDICTS),
        "contexts": pa.Table.from_pylist(contexts, schema=schemas.CONTEXTS),
    }
