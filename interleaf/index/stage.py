"""Index stage: a document's quotes -> one retriever's index rows; and the loaded index that
the retrieve stage searches (every retriever over one quote universe, in one order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from interleaf.index.config import IndexConfig, RetrieverConfig
from interleaf.index.corpus import QuoteCorpus, build_corpus
from interleaf.index.protocol import Retriever
from interleaf.index.registry import get_retriever
from interleaf.stage import StageInput, StageOutput
from interleaf.structure import INDEX_MODULES
from interleaf.structure.scopes import QuoteScopes
from interleaf.versions import package_versions
from warehouse import schemas

STAGE = "index"

# What each retriever kind runs beyond the source: the releases of its engines.
ENGINES = {
    "bm25": ("bm25s", "snowballstemmer"),
    "onnx": ("onnxruntime",),
    "sentence-transformers": ("sentence-transformers", "transformers", "torch"),
    "flagembedding": ("FlagEmbedding", "transformers", "torch"),
    "transformers": ("transformers", "torch"),
}


def corpus_for(
    spec: RetrieverConfig, config: IndexConfig, quotes: pa.Table, documents: pa.Table, quote_texts: pa.Table | None
) -> QuoteCorpus:
    return build_corpus(quotes, documents, quote_texts, spec.fields, config.skip_kinds)


def index_texts_rows(retriever: Retriever, corpus: QuoteCorpus) -> pa.Table:
    """What the retriever matched against, per quote: readable in SQL beside its scores."""
    keys = retriever.keys(corpus)
    rows = [
        {"retriever": retriever.name, "quote_id": corpus.quote_ids[i], "doc_id": corpus.doc_ids[i]}
        | {"key": keys[i], "text": corpus.texts[i]}
        for i in retriever.applies_to(corpus)
    ]
    return pa.Table.from_pylist(rows, schema=schemas.INDEX_TEXTS)


class IndexStage:
    """One retriever over one document's quotes -> its index rows (`index:<retriever name>`).

    Each retriever is its own stage: adding one, or switching a dense model, recomputes that one
    only. Vectors whose key (text + model) is unchanged are taken from the previous published
    output instead of being encoded again."""

    unit = "document"
    inputs = ("documents", "quotes", "quote_texts")
    upstream = ("parse", "describe")
    sources = ("interleaf.index", "interleaf.text", "interleaf.kinds", *INDEX_MODULES, "interleaf.evidence")
    retries = 1
    retry_on: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, spec: RetrieverConfig, config: IndexConfig) -> None:
        self.spec, self.index_config = spec, config
        self.name = f"{STAGE}:{spec.name}"
        self.outputs = ("index_texts",) if spec.kind == "bm25" else ("index_texts", "quote_embeddings")
        self._retriever: Retriever | None = None

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = get_retriever(self.spec)
        return self._retriever

    def config(self) -> dict[str, Any]:
        return {"retriever": self.spec.fingerprint_config(), "skip_kinds": sorted(self.index_config.skip_kinds)}

    def prompt_hashes(self) -> list[str]:
        return []

    def version(self) -> dict[str, str]:
        engine = self.spec.kind if self.spec.kind == "bm25" else getattr(self.spec, "backend", "")
        return package_versions(ENGINES.get(engine, ()))

    def run(self, given: StageInput) -> StageOutput:
        tables = given.tables
        corpus = corpus_for(self.spec, self.index_config, tables["quotes"], tables["documents"], tables["quote_texts"])
        retriever = self.retriever
        out = {"index_texts": index_texts_rows(retriever, corpus)}
        encoded = corpus_size = len(retriever.applies_to(corpus))
        if "quote_embeddings" in self.outputs:
            out["quote_embeddings"] = retriever.encode(corpus, given.previous.get("quote_embeddings"), str(given.root))
            encoded = getattr(retriever, "encoded_count", corpus_size)
        return StageOutput(out, counts={"quotes": corpus_size, "encoded": encoded})


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
    sections: pa.Table | None = None,
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
    section_rows = sections.to_pylist() if sections is not None else []
    return LoadedIndex(corpus, retrievers, weights, question_only, section_rows)


def _empty(retriever: Retriever) -> pa.Table:
    return schemas.empty(retriever.table)
