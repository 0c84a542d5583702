"""The index stage's swappable part: a Retriever encodes quotes once and scores queries against them."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

import numpy as np
import pyarrow as pa

from interleaf.index.corpus import QuoteCorpus


class Encoded(NamedTuple):
    """A retriever's index rows for a corpus, and how many of them were computed anew (the rest
    were reused by key): the ledger's and the benchmarks' `encoded` count."""

    rows: pa.Table
    encoded: int


class Retriever(Protocol):
    name: str
    kind: str  # its key in interleaf/index/registry.py
    table: str  # the warehouse table its index rows go to (every retriever also writes index_texts)
    lexical: bool  # a score of 0 means no term matched: retrieval keeps no such hit

    def __init__(self, spec: Any) -> None:
        """From its `index.retrievers` item; loads no model (the stage and the snapshot build it)."""
        ...

    def fingerprint_config(self) -> dict[str, Any]: ...

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        """Positions of the quotes this retriever indexes (a visual one: image quotes only)."""
        ...

    def keys(self, corpus: QuoteCorpus) -> list[str]:
        """One key per quote in `corpus`: what the stored row for it must carry to be reused."""
        ...

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> Encoded:
        """Index rows for `corpus`, reusing rows of `reuse` whose key still matches (incremental)."""
        ...

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        """Make `corpus` searchable from its stored rows."""
        ...

    def prepare(self) -> None:
        """Load what a first query needs besides the loaded rows (a query encoder; nothing for a
        lexical one). Called once per loaded index, while a snapshot's digest is checked beside."""
        ...

    def scores(self, queries: list[str]) -> np.ndarray:
        """(len(queries), len(loaded corpus)) similarity; higher is better; -inf where not indexed."""
        ...
