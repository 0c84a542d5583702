"""Qwen3-Reranker's scoring path on a tiny random Qwen2 built here: loading by path, the yes/no
read-out at the last position, and left padding (a batch must score each pair as it scores alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleaf.retrieve.config import RerankConfig
from interleaf.retrieve.registry import get_reranker
from tests.tiny_models import build_causal_lm

PASSAGES = [
    "Table 3 reports revenue growth of 12 percent in 2023.",
    "figure",
    "The chart shows the revenue trend by year, with a long caption that makes this pair much longer.",
]


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_causal_lm(tmp_path_factory.mktemp("tiny-qwen3-reranker"), PASSAGES)


def test_qwen3_reranker_scores_are_probabilities_and_batch_independent(tiny_qwen: Path) -> None:
    reranker = get_reranker(RerankConfig(backend="qwen3", model=str(tiny_qwen), batch_size=3))
    assert reranker is not None and reranker.name == "qwen3"
    query = "What revenue growth does Table 3 report?"
    batched = reranker.score(query, PASSAGES)
    assert len(batched) == 3 and all(0.0 < s < 1.0 for s in batched)
    alone = [reranker.score(query, [p])[0] for p in PASSAGES]
    assert batched == pytest.approx(alone, abs=1e-4)  # left padding: the last position is the real last token
    assert len(set(round(s, 6) for s in batched)) > 1  # the passage reaches the read-out
