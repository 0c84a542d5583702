"""The query-time index: every configured retriever loaded over one quote universe, in one order,
and the holder that keeps one such index per process and says when it is (re)loaded.

The index stage (interleaf/index/) writes each retriever's rows per document; the retrieve stage
searches them all at once. Loading is explicit: whoever answers questions owns an `IndexHolder`
and hands it to the retrieve stage (`interleaf ask` / `answer` / `eval`: one per run, shared by
eval's variants; the server: one for its life, loaded at start and again when an ingest publishes).
A holder keeps one corpus at a time: an index can hold hundreds of MB of vectors.
"""

from __future__ import annotations

import functools
import gc
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from interleaf.index.config import IndexConfig
from interleaf.index.corpus import QuoteCorpus, build_corpus
from interleaf.index.protocol import Retriever
from interleaf.index.registry import get_retriever, retriever_class
from interleaf.kinds import Modality
from interleaf.structure.scopes import QuoteScopes
from warehouse import schemas


@dataclass
class LoadedIndex:
    """Every configured retriever loaded over one quote universe, in one order.

    What is derived from the corpus (positions, pages, scopes) is worked out when first asked for.
    A snapshot (`snapshot.py`) stores it pickled apart, unpickled at the first question rather than
    at the load: a load maps arrays and decodes nothing a question may not need."""

    corpus: QuoteCorpus
    retrievers: dict[str, Retriever]
    weights: dict[str, float]
    question_only: frozenset[str] = frozenset()  # retrievers asked the question clause only
    sections: list[dict[str, Any]] = field(default_factory=list)  # `sections` rows (interleaf.structure)

    def __post_init__(self) -> None:
        self._masks: dict[str | None, np.ndarray] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        # the sections as an Arrow table and the derived structures as one pickle, both out of
        # band (a snapshot maps them); each is decoded when first used
        derived = pickle.dumps({name: getattr(self, name) for name in DERIVED}, protocol=5)
        fields = (self.corpus, self.retrievers, self.weights, self.question_only)
        return (_restored_index, (*fields, _section_table(self.sections), pickle.PickleBuffer(derived)))

    def __getattr__(self, name: str) -> Any:
        # only called when the attribute is missing: a restored index's sections, not decoded yet
        rows = self.__dict__.get("_section_rows")
        if name != "sections" or rows is None:
            raise AttributeError(name)
        self.__dict__["sections"] = rows.to_pylist()
        return self.__dict__["sections"]

    def _stored(self, name: str) -> Any:
        """`name` as the snapshot stored it (None: built here, or not stored)."""
        with _UNPICKLING:
            blob = self.__dict__.pop("_derived", None)
            if blob is not None:
                self.__dict__.update(_unpickled(blob))
        return self.__dict__.get(name)

    @functools.cached_property
    def position(self) -> dict[str, int]:
        return self._stored("position") or {q: i for i, q in enumerate(self.corpus.quote_ids)}

    @functools.cached_property
    def modalities(self) -> list[Modality]:
        return self.corpus.modalities  # computed once: a query must not walk the corpus

    @functools.cached_property
    def page_of(self) -> dict[str, tuple[str, int]]:
        c = self.corpus
        stored = self._stored("page_of")
        return stored or {q: (d, p) for q, d, p in zip(c.quote_ids, c.doc_ids, c.page_idx, strict=True)}

    @functools.cached_property
    def page_array(self) -> np.ndarray:
        """Each loaded quote's page_idx, in load order (a mask of a page's quotes is one comparison)."""
        return np.asarray(self.corpus.page_idx, dtype=np.int64)

    @functools.cached_property
    def scopes(self) -> QuoteScopes:
        """What a question's references point at, as masks; each quote's section as a fusion group."""
        c = self.corpus
        return self._stored("scopes") or QuoteScopes(
            c.quote_ids, c.doc_ids, c.page_idx, self.modalities, c.section_ids, c.label_lines, self.sections
        )

    @functools.cached_property
    def _doc_ids(self) -> np.ndarray:
        stored = self._stored("_doc_ids")
        return stored if stored is not None else np.asarray(self.corpus.doc_ids)

    def ready(self) -> bool:
        """Load each retriever's query encoder, then wait for the check of the stored bytes this
        index reads (a snapshot's digest, computed beside the load and the encoders): False when
        they are damaged, and the index must not be used. An index built from rows is sound."""
        for retriever in self.retrievers.values():
            retriever.prepare()
        check = self.__dict__.get("_check")
        return True if check is None else check.result()

    def attach_check(self, check: Future[bool]) -> None:
        """The digest check of the snapshot this index was read from (`ready` waits for it)."""
        self.__dict__["_check"] = check

    def warm_up(self) -> None:
        """Ask every retriever once: a dense one loads its query encoder on its first query
        (MiniLM on ONNX Runtime: ~1-2 s here), which must not be a user's first question."""
        for retriever in self.retrievers.values():
            retriever.scores(["warm up"])

    def doc_mask(self, doc_id: str | None) -> np.ndarray:
        if doc_id not in self._masks:
            self._masks[doc_id] = np.ones(len(self._doc_ids), dtype=bool) if doc_id is None else self._doc_ids == doc_id
        return self._masks[doc_id]


# what a snapshot stores of a LoadedIndex's derived structures (the costly ones to work out again)
DERIVED = ("position", "page_of", "scopes", "_doc_ids")
_UNPICKLING = threading.Lock()  # two first questions at once unpickle the derived structures once


def _unpickled(blob: memoryview) -> dict[str, Any]:
    """With the cyclic garbage collector paused: the many objects allocated would set it off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(blob)
    finally:
        if enabled:
            gc.enable()


def _section_table(sections: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(sections) if sections else pa.table({})


def _restored_index(
    corpus: QuoteCorpus,
    retrievers: dict[str, Retriever],
    weights: dict[str, float],
    question_only: frozenset[str],
    section_rows: pa.Table,
    derived: memoryview | bytes,
) -> LoadedIndex:
    index = LoadedIndex.__new__(LoadedIndex)
    index.__dict__.update(corpus=corpus, retrievers=retrievers, weights=weights, question_only=question_only)
    index.__dict__.update(_section_rows=section_rows, _derived=derived, _masks={})
    return index


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
