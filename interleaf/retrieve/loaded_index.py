"""The query-time index: every configured retriever loaded over one quote universe, in one order,
and the holder that keeps one such index per process and says when it is (re)loaded.

The index stage (interleaf/index/) writes each retriever's rows per document; the retrieve stage
searches them all at once. Loading is explicit: whoever answers questions owns an `IndexHolder`
and hands it to the retrieve stage (`interleaf ask` / `answer` / `eval`: one per run, shared by
eval's variants; the server: one for its life, loaded at start and again when an ingest publishes).
A holder keeps one corpus at a time: an index can hold hundreds of MB of vectors.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from interleaf.index.config import IndexConfig
from interleaf.index.corpus import QuoteCorpus, build_corpus
from interleaf.index.protocol import Retriever
from interleaf.index.registry import get_retriever, retriever_class
from interleaf.structure.scopes import QuoteScopes
from warehouse import schemas


@dataclass
class LoadedIndex:
    """Every configured retriever loaded over one quote universe, in one order."""

    corpus: QuoteCorpus
    retrievers: dict[str, Retriever]
    weights: dict[str, float]
    question_only: frozenset[str] = frozenset()  # retrievers asked the question clause only
    sections: list[dict[str, Any]] = field(default_factory=list)  # `sections` rows (interleaf.structure)

    def __post_init__(self) -> None:
        self.position = {q: i for i, q in enumerate(self.corpus.quote_ids)}
        self.modalities = self.corpus.modalities  # computed once: a query must not walk the corpus
        self.page_of = {
            q: (d, p) for q, d, p in zip(self.corpus.quote_ids, self.corpus.doc_ids, self.corpus.page_idx, strict=True)
        }
        self._doc_ids = np.asarray(self.corpus.doc_ids)
        self._masks: dict[str | None, np.ndarray] = {}
        c = self.corpus
        # what a question's references point at, as masks; each quote's section as a fusion group
        self.scopes = QuoteScopes(
            c.quote_ids, c.doc_ids, c.page_idx, self.modalities, c.section_ids, c.label_lines, self.sections
        )

    def warm_up(self) -> None:
        """Ask every retriever once: a dense one loads its query encoder on its first query
        (MiniLM on ONNX Runtime: ~1-2 s here), which must not be a user's first question."""
        for retriever in self.retrievers.values():
            retriever.scores(["warm up"])

    def doc_mask(self, doc_id: str | None) -> np.ndarray:
        if doc_id not in self._masks:
            self._masks[doc_id] = np.ones(len(self._doc_ids), dtype=bool) if doc_id is None else self._doc_ids == doc_id
        return self._masks[doc_id]


def rows_of_retrievers(config: IndexConfig, tables: Mapping[str, pa.Table]) -> dict[str, pa.Table]:
    """Each retriever's stored rows, from the table its kind writes into (only the tables the
    configured retrievers write are read: a flow of BM25 retrievers alone has no embeddings)."""
    out = {}
    for spec in config.retrievers:
        table = tables[retriever_class(spec.kind).table]
        out[spec.name] = table.filter(pc.equal(table.column("retriever"), spec.name))
    return out


def load_index(
    config: IndexConfig,
    quotes: pa.Table,
    documents: pa.Table,
    quote_texts: pa.Table | None,
    rows_of: dict[str, pa.Table],
    only: list[str] | None = None,
    sections: pa.Table | None = None,
) -> LoadedIndex:
    """Pure given the stored rows (`rows_of[retriever name]`)."""
    corpus: QuoteCorpus | None = None
    retrievers: dict[str, Retriever] = {}
    for spec in config.retrievers:
        if only is not None and spec.name not in only:
            continue
        own = build_corpus(quotes, documents, quote_texts, spec.fields, config.skip_kinds)
        if corpus is None:
            corpus = own
        elif own.quote_ids != corpus.quote_ids:
            raise ValueError(f"retriever {spec.name!r} sees another quote set than {next(iter(retrievers))!r}")
        retriever = get_retriever(spec)
        retriever.load(own, rows_of[spec.name] if spec.name in rows_of else schemas.empty(retriever.table))
        retrievers[spec.name] = retriever
    if corpus is None:
        raise ValueError("no retriever is configured")
    weights = {s.name: s.weight for s in config.retrievers if s.name in retrievers}
    question_only = frozenset(s.name for s in config.retrievers if s.name in retrievers and s.clauses == "question")
    section_rows = sections.to_pylist() if sections is not None else []
    return LoadedIndex(corpus, retrievers, weights, question_only, section_rows)


@dataclass(frozen=True)
class Loaded:
    """What a holder holds: the index and what it was built from."""

    key: str  # the retrieve stage's upstream fingerprints (the corpus digest among them)
    index: LoadedIndex
    seconds: float  # how long reading and building it took
    at: float  # when it was loaded (time.time())


class IndexHolder:
    """One loaded index per process, keyed by the fingerprints it was built from.

    `get(key, build)` returns the index built for `key`, building it (under a lock, so concurrent
    callers wait for one build instead of making two) when the holder has another or none. The old
    index is let go before the new one is built: memory holds one corpus at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: Loaded | None = None
        self.loads = 0  # how many times an index was built (the server's health check reports it)

    @property
    def loaded(self) -> Loaded | None:
        return self._loaded

    def get(self, key: str, build: Callable[[], LoadedIndex]) -> LoadedIndex:
        loaded = self._loaded
        if loaded is not None and loaded.key == key:
            return loaded.index
        with self._lock:
            if self._loaded is not None and self._loaded.key == key:
                return self._loaded.index
            self._loaded = None
            started = time.perf_counter()
            index = build()
            self._loaded = Loaded(key, index, time.perf_counter() - started, time.time())
            self.loads += 1
            return index

    def clear(self) -> None:
        with self._lock:
            self._loaded = None
