"""Index stage: a document's quotes -> one retriever's index rows. (What the retrieve stage
searches, every retriever loaded over the whole corpus, is interleaf/retrieve/loaded_index.py.)"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from interleaf.index.config import IndexConfig
from interleaf.index.corpus import QuoteCorpus, build_corpus
from interleaf.index.protocol import Retriever
from interleaf.index.registry import RetrieverConfig, get_retriever, retriever_class
from interleaf.runtime.heap import return_freed_memory
from interleaf.stage import StageInput, StageOutput
from interleaf.structure import INDEX_MODULES
from interleaf.versions import package_versions
from warehouse import schemas

STAGE = "index"


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
    page_work = False
    inputs = ("documents", "quotes", "quote_texts")
    upstream = ("parse", "describe")
    sources = ("interleaf.index", "interleaf.text", "interleaf.kinds", *INDEX_MODULES, "interleaf.evidence")
    retries = 1
    retry_on: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, spec: RetrieverConfig, config: IndexConfig, hold_model: bool = True) -> None:
        """`hold_model`: keep the retriever's model loaded between documents. Off under a memory
        budget (`parse.memory_budget_mb`): MiniLM on ONNX Runtime reloads in 0.15 s, and the command's
        process held 142 MB less once it was let go after the 619-page manual (probe, one process)."""
        self.spec, self.index_config, self.hold_model = spec, config, hold_model
        self.name = f"{STAGE}:{spec.name}"
        self.outputs = tuple(dict.fromkeys(("index_texts", retriever_class(spec.kind).table)))
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
        return package_versions(self.spec.engines())

    def run(self, given: StageInput) -> StageOutput:
        output = self._index(self.retriever, given)
        if not self.hold_model:
            self._retriever = None  # a run still going in another thread keeps its own reference
            return_freed_memory()
        return output

    def _index(self, retriever: Retriever, given: StageInput) -> StageOutput:
        tables = given.tables
        corpus = corpus_for(self.spec, self.index_config, tables["quotes"], tables["documents"], tables["quote_texts"])
        out = {"index_texts": index_texts_rows(retriever, corpus)}
        encoded = corpus_size = len(retriever.applies_to(corpus))
        if retriever.table not in out:  # rows of its own beside what it matched against (vectors)
            out[retriever.table], encoded = retriever.encode(
                corpus, given.previous.get(retriever.table), str(given.root)
            )
        return StageOutput(out, counts={"quotes": corpus_size, "encoded": encoded})
