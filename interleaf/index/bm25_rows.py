"""BM25 over the rows of tables and figures: each printed line that labels a value ("Licensing revenue
2,140 1,975", "| Total inventory | 3,410 |") is a passage of its own, and a quote scores as its best row.

A question asks for one line item of a statement or one bar of a chart; over the whole quote, its
few words are lost among a page of others (a balance sheet's 40 rows), and BM25's length
normalisation ranks the statement below every paragraph of the notes that repeats the item's name.
Over rows, the row that names the item is short and names little else. Text quotes are left to the
other retrievers: a paragraph's printed lines are no units of meaning.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from interleaf.index.bm25 import BM25Retriever
from interleaf.index.corpus import QuoteCorpus
from interleaf.kinds import modality_of

# a row: letters (a label) and a digit (a value) on one printed line, not a sentence
_ROW = re.compile(r"[^\W\d_]{2}.*\d|\d.*[^\W\d_]{2}")
# longer, a line is prose wrapped in a box, not a row; a bound on form, not fitted on any set
_MAX_ROW_WORDS = 25


def rows_of(text: str) -> list[str]:
    """The distinct label-and-value lines of a quote's indexed text."""
    lines = (" ".join(line.replace("|", " ").split()) for line in text.splitlines())
    return list(dict.fromkeys(line for line in lines if _ROW.search(line) and len(line.split()) <= _MAX_ROW_WORDS))


class BM25RowsRetriever(BM25Retriever):
    kind = "bm25_rows"
    _owners: np.ndarray = np.zeros(0, dtype=np.int64)  # per row passage: its quote's position

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        return [i for i, k in enumerate(corpus.kinds) if modality_of(k) == "image"]

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        stored = dict(zip(rows.column("quote_id").to_pylist(), rows.column("text").to_pylist(), strict=True))
        self._n = len(corpus.quote_ids)
        owners: list[int] = []
        tokens: list[list[str]] = []
        for i, quote_id in enumerate(corpus.quote_ids):
            for row in rows_of(stored.get(quote_id) or ""):
                owners.append(i)
                tokens.append(self._tokens(row))
        self._owners = np.asarray(owners, dtype=np.int64)
        self._index_passages(tokens)

    def scores(self, queries: list[str]) -> np.ndarray:
        """Each quote's best row's BM25 score (0 for a quote with no row matching)."""
        out = np.zeros((len(queries), self._n), dtype=np.float32)
        if not self._n or not self.vocabulary or not len(self._owners):
            return out
        for i, q in enumerate(queries):
            found = self._passage_scores(q)
            if found is not None:
                np.maximum.at(out[i], self._owners, found.astype(np.float32))
        return out
