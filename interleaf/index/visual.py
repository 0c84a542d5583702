"""Text-to-image retriever over image quotes (figure / table / equation crops).

CLIP and SigLIP through transformers (`AutoModel` + `AutoProcessor`, by id or local path). With
several models, V-RAG's encoder ensemble (dochaystack-vrag §3, Sim_avg) is followed: each model's
cosine similarities are computed separately and averaged.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from interleaf.index.corpus import QuoteCorpus
from interleaf.index.dense import encode_rows, matrix_for, resolve_model
from interleaf.index.protocol import Encoded
from interleaf.index.retriever_config import VisualConfig
from interleaf.kinds import modality_of

NOT_INDEXED = -1e9  # text quotes: a visual retriever has nothing to say about them


def _normalise(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _features(out: Any) -> Any:
    # transformers 5 may return a model output instead of a tensor from get_*_features
    return out if hasattr(out, "detach") else getattr(out, "pooler_output", out[0])


class _ClipLike:
    def __init__(self, model_id: str, device: str) -> None:
        self.model_id = model_id
        self.path = resolve_model(model_id)
        self.device = device
        self._model: Any = None
        self._processor: Any = None

    def load(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModel, AutoProcessor

            self._processor = AutoProcessor.from_pretrained(self.path)
            self._model = AutoModel.from_pretrained(self.path).to(self.device).eval()
        return self._model, self._processor

    def encode_text(self, texts: list[str]) -> np.ndarray:
        import torch

        model, processor = self.load()
        # SigLIP was trained on max_length padding; CLIP accepts either
        inputs = processor(text=texts, padding="max_length", truncation=True, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            feats = _features(model.get_text_features(**{k: v for k, v in inputs.items() if k != "pixel_values"}))
        return _normalise(feats.float().cpu().numpy())

    def encode_images(self, paths: list[Path], batch_size: int) -> np.ndarray:
        import torch
        from PIL import Image

        model, processor = self.load()
        chunks = []
        for start in range(0, len(paths), batch_size):
            images = [Image.open(p).convert("RGB") for p in paths[start : start + batch_size]]
            pixels = processor(images=images, return_tensors="pt")["pixel_values"].to(self.device)
            with torch.inference_mode():
                chunks.append(_features(model.get_image_features(pixel_values=pixels)).float().cpu().numpy())
        return _normalise(np.concatenate(chunks))


class VisualRetriever:
    kind = "visual"
    table = "quote_embeddings"
    lexical = False

    def __init__(self, spec: VisualConfig) -> None:
        self.spec = spec
        self.name = spec.name
        self.encoders = [_ClipLike(m, spec.device) for m in spec.models]
        self.model_id = "+".join(spec.models)
        self._matrices: list[np.ndarray] = []
        self._indexed = np.zeros(0, dtype=bool)
        self._image_bytes: dict[str, str] = {}

    def fingerprint_config(self) -> dict[str, Any]:
        return self.spec.fingerprint_config()

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        return [i for i, k in enumerate(corpus.kinds) if modality_of(k) == "image" and corpus.img_paths[i]]

    def keys(self, corpus: QuoteCorpus) -> list[str]:
        # the crop's path names its parse fingerprint and quote: a re-parsed crop gets a new key
        return [hashlib.sha256(f"{self.model_id}\x00{p}".encode()).hexdigest()[:24] for p in corpus.img_paths]

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> Encoded:
        def encode_fn(idx: list[int]) -> np.ndarray:
            paths = [Path(root) / str(corpus.img_paths[i]) for i in idx]
            # one row per quote holds every model's vector, concatenated in model order
            return np.concatenate([e.encode_images(paths, self.spec.batch_size) for e in self.encoders], axis=1)

        return encode_rows(self, corpus, reuse, encode_fn)

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        full = matrix_for(corpus, rows)
        self._indexed = np.zeros(len(corpus), dtype=bool)
        self._indexed[self.applies_to(corpus)] = True
        self._indexed &= np.abs(full).sum(axis=1) > 0 if full.size else False
        self._matrices = []
        start = 0
        for width in self._widths(full.shape[1]):
            self._matrices.append(full[:, start : start + width])
            start += width

    def _widths(self, total: int) -> list[int]:
        # every model's width is learnt from a text probe: cheap, and no config to keep in sync
        return [e.encode_text(["probe"]).shape[1] for e in self.encoders] if total else []

    def prepare(self) -> None:
        if self._matrices:
            for encoder in self.encoders:
                encoder.load()

    def scores(self, queries: list[str]) -> np.ndarray:
        n = len(self._indexed)
        if not self._matrices:
            return np.full((len(queries), n), NOT_INDEXED, dtype=np.float32)
        sims = [e.encode_text(queries) @ m.T for e, m in zip(self.encoders, self._matrices, strict=True)]
        avg = np.mean(sims, axis=0).astype(np.float32)  # V-RAG: Sim_avg over the encoder ensemble
        avg[:, ~self._indexed] = NOT_INDEXED
        return avg
