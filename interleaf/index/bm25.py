"""BM25 over the quotes' indexed texts (bm25s). The index is rebuilt in memory from the stored
texts at load time: bm25s indexes 50k passages in under a second, cheaper than storing its arrays."""

from __future__ import annotations

import functools
import logging
from typing import Any

import bm25s
import numpy as np
import pyarrow as pa

from interleaf.index.corpus import QuoteCorpus, text_key
from interleaf.index.protocol import Encoded
from interleaf.index.retriever_config import BM25Config
from interleaf.text.tokens import tokenize
from warehouse import schemas

# bm25s logs every index build at DEBUG through its own handler: once per query in `interleaf ask`
logging.getLogger("bm25s").setLevel(logging.WARNING)


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    # Snowball stems one word in ~50 µs; a corpus repeats its words, so the cache makes it free
    return word if word[0].isdigit() else _stemmer().stemWord(word)


@functools.cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def stemmed(text: str) -> list[str]:
    """A second lexical view: "retrieved" and "retrieval" meet at "retriev" (numbers stay whole)."""
    return [_stem(t) for t in tokenize(text)]


class BM25Retriever:
    kind = "bm25"
    table = "index_texts"
    lexical = True  # no shared term scores 0

    def __init__(self, spec: BM25Config) -> None:
        self.spec = spec
        self.name = spec.name
        self._bm25: bm25s.BM25 | None = None
        self.vocabulary: dict[str, int] = {}
        self._n = 0

    def fingerprint_config(self) -> dict[str, Any]:
        return self.spec.fingerprint_config()

    def _tokens(self, text: str) -> list[str]:
        return stemmed(text) if self.spec.stemmer else tokenize(text)

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        return list(range(len(corpus)))

    def keys(self, corpus: QuoteCorpus) -> list[str]:
        return [text_key(t, "bm25") for t in corpus.texts]

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> Encoded:
        rows = [
            {"retriever": self.name, "quote_id": q, "doc_id": d, "key": k, "text": t}
            for q, d, k, t in zip(corpus.quote_ids, corpus.doc_ids, self.keys(corpus), corpus.texts, strict=True)
        ]
        return Encoded(pa.Table.from_pylist(rows, schema=schemas.INDEX_TEXTS), len(rows))

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        stored = dict(zip(rows.column("quote_id").to_pylist(), rows.column("text").to_pylist(), strict=True))
        texts = [stored.get(q, "") for q in corpus.quote_ids]
        self._n = len(texts)
        self._index_passages([self._tokens(t) for t in texts])

    def _index_passages(self, tokens: list[list[str]]) -> None:
        """The BM25 index over passages given as tokens (a quote each here; bm25_rows: a row each)."""
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(w, len(vocab)) for w in toks] for toks in tokens]
        self.vocabulary = vocab
        self._bm25 = bm25s.BM25(k1=self.spec.k1, b=self.spec.b)
        if tokens and vocab:  # no stored rows (not indexed yet under this fingerprint): nothing to find
            self._bm25.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)

    def _passage_scores(self, query: str) -> np.ndarray | None:
        """Every passage's BM25 score for the query; None where it shares no indexed term."""
        vocab = self.vocabulary
        ids = [vocab[w] for w in self._tokens(query) if w in vocab]
        return self._bm25.get_scores(ids) if ids and self._bm25 is not None else None

    # Pickled (into a snapshot, interleaf/retrieve/snapshot.py) as bm25s's score arrays, which the
    # snapshot maps, and the vocabulary as one Arrow column in id order: the word -> id dict is
    # made again at the first query, not at every load. bm25s's own copy of the vocabulary is
    # left out: its scores are asked by token ids.
    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_vocab_ids", "_words")}
        state["_words"] = pa.array(list(self.vocabulary), pa.large_string())  # a dict's order: its ids'
        if self._bm25 is not None:
            bm25 = object.__new__(type(self._bm25))
            bm25.__dict__.update(self._bm25.__dict__, vocab_dict=None, unique_token_ids_set=None)
            state["_bm25"] = bm25
        return state

    @property
    def vocabulary(self) -> dict[str, int]:
        vocab = self.__dict__.get("_vocab_ids")
        if vocab is None:
            words = self.__dict__.get("_words")
            vocab = {w: i for i, w in enumerate(words.to_pylist())} if words is not None else {}
            self.__dict__["_vocab_ids"] = vocab
        return vocab

    @vocabulary.setter
    def vocabulary(self, vocab: dict[str, int]) -> None:
        self.__dict__["_vocab_ids"] = vocab
        self.__dict__.pop("_words", None)

    def prepare(self) -> None:
        """Nothing to load: the vocabulary is made at the first query, which needs it."""

    def scores(self, queries: list[str]) -> np.ndarray:
        out = np.zeros((len(queries), self._n), dtype=np.float32)
        if not self._n or not self.vocabulary:
            return out
        for i, q in enumerate(queries):
            found = self._passage_scores(q)
            if found is not None:
                out[i] = found
        return out
