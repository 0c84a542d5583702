"""Index stage, pure: quotes -> each retriever's index rows, one part per document and retriever.

Every retriever has its own fingerprint (its config + code), so switching the dense model or adding
a retriever recomputes that retriever's index only. Within a fingerprint, parts are incremental:
a document whose indexed keys are unchanged is skipped, and a changed one (new describe text, a
re-parse) re-encodes only the quotes whose key is new.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from interleaf.fingerprint import stage_fingerprint
from interleaf.index.config import IndexConfig, RetrieverConfig
from interleaf.index.corpus import QuoteCorpus, build_corpus
from interleaf.index.protocol import Retriever
from interleaf.index.registry import get_retriever

STAGE = "index"


def stage_name(spec: RetrieverConfig) -> str:
    return f"{STAGE}:{spec.name}"


def retriever_fingerprint(retriever: Retriever, config: IndexConfig) -> str:
    cfg = {"retriever": retriever.fingerprint_config(), "skip_kinds": sorted(config.skip_kinds)}
    return stage_fingerprint(f"{STAGE}:{retriever.kind}", cfg, retriever.code_version)


def split_by_document(corpus: QuoteCorpus) -> dict[str, QuoteCorpus]:
    positions: dict[str, list[int]] = {}
    for i, d in enumerate(corpus.doc_ids):
        positions.setdefault(d, []).append(i)
    return {d: corpus.subset(idx) for d, idx in positions.items()}


def wanted_keys(retriever: Retriever, corpus: QuoteCorpus) -> set[str]:
    keys = retriever.keys(corpus)
    return {keys[i] for i in retriever.applies_to(corpus)}


def is_current(retriever: Retriever, corpus: QuoteCorpus, stored: pa.Table | None) -> bool:
    return stored is not None and set(stored.column("key").to_pylist()) == wanted_keys(retriever, corpus)


def index_document(retriever: Retriever, corpus: QuoteCorpus, previous: pa.Table | None, root: str) -> pa.Table:
    """The rows of one document's part; vectors of `previous` whose key still matches are reused."""
    return retriever.encode(corpus, previous, root)


def corpus_for(
    spec: RetrieverConfig, config: IndexConfig, quotes: pa.Table, documents: pa.Table, quote_texts: pa.Table | None
) -> QuoteCorpus:
    return build_corpus(quotes, documents, quote_texts, spec.fields, config.skip_kinds)


@dataclass
class LoadedIndex:
    """Every configured retriever loaded over one quote universe, in one order."""

    corpus: QuoteCorpus
    retrievers: dict[str, Retriever]
    weights: dict[str, float]
    question_only: frozenset[str] = frozenset()  # retrievers asked the question clause only

    def __post_init__(self) -> None:
        self.position = {q: i for i, q in enumerate(self.corpus.quote_ids)}
        self.modalities = self.corpus.modalities  # computed once: a query must not walk the corpus
        self.page_of = {
            q: (d, p) for q, d, p in zip(self.corpus.quote_ids, self.corpus.doc_ids, self.corpus.page_idx, strict=True)
        }
        self._doc_ids = np.asarray(self.corpus.doc_ids)
        self._masks: dict[str | None, np.ndarray] = {}

    def doc_mask(self, doc_id: str | None) -> np.ndarray:
        if doc_id not in self._masks:
            self._masks[doc_id] = np.ones(len(self._doc_ids), dtype=bool) if doc_id is None else self._doc_ids == doc_id
        return self._masks[doc_id]


def load_index(
    config: IndexConfig,
    quotes: pa.Table,
    documents: pa.Table,
    quote_texts: pa.Table | None,
    rows_of: dict[str, pa.Table],
    only: list[str] | None = None,
) -> LoadedIndex:
    """Pure given the stored rows (`rows_of[retriever name]`)."""
    corpus: QuoteCorpus | None = None
    retrievers: dict[str, Retriever] = {}
    for spec in config.retrievers:
        if only is not None and spec.name not in only:
            continue
        own = corpus_for(spec, config, quotes, documents, quote_texts)
        if corpus is None:
            corpus = own
        elif own.quote_ids != corpus.quote_ids:
            raise ValueError(f"retriever {spec.name!r} sees another quote set than {next(iter(retrievers))!r}")
        retriever = get_retriever(spec)
        retriever.load(own, rows_of[spec.name] if spec.name in rows_of else _empty(retriever))
        retrievers[spec.name] = retriever
    if corpus is None:
        raise ValueError("no retriever is configured")
    weights = {s.name: s.weight for s in config.retrievers if s.name in retrievers}
    question_only = frozenset(s.name for s in config.retrievers if s.name in retrievers and s.clauses == "question")
    return LoadedIndex(corpus, retrievers, weights, question_only)


def _empty(retriever: Retriever) -> pa.Table:
    from warehouse import schemas

    return schemas.empty(retriever.table)


def build_retrievers(config: IndexConfig) -> list[tuple[RetrieverConfig, Retriever]]:
    return [(spec, get_retriever(spec)) for spec in config.retrievers]
