"""Fusion, quotas and the rerankers (the cross-encoders on a tiny random model built here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleaf.retrieve.fusion import Hit, apply_quota, rrf
from interleaf.retrieve.lexical import LexicalReranker


def test_rrf_max_keeps_a_top_hit_of_one_clause_above_middling_ones() -> None:
    hits = [Hit(0, "bm25", "top", 1, 9.0)] + [Hit(c, "bm25", "mid", 5, 1.0) for c in range(4)]
    assert rrf(hits, {}, {}, 20, "max")[0][0] == "top"
    assert rrf(hits, {}, {}, 20, "sum")[0][0] == "mid"


def test_rrf_weights_retrievers() -> None:
    hits = [Hit(0, "a", "x", 1, 1.0), Hit(0, "b", "y", 1, 1.0)]
    assert rrf(hits, {"a": 0.5, "b": 1.0}, {}, 20)[0][0] == "y"


def test_quota_caps_each_modality_and_spills_when_one_runs_short() -> None:
    ranked = [(f"i{n}", 1.0 - n / 100) for n in range(10)] + [("t0", 0.5), ("t1", 0.4)]
    modality = {q: ("image" if q.startswith("i") else "text") for q, _ in ranked}
    ctx = apply_quota(ranked, modality, 5, (2, 3))
    assert [q for q, _ in ctx] == ["i0", "i1", "i2", "t0", "t1"]  # 2 images, 2 texts, 1 spilled image


def test_lexical_reranker_prefers_the_passage_with_the_cues() -> None:
    scores = LexicalReranker().score(
        "Which model scores the highest F1 in Table 2?",
        ["Table 2: entailment models. Qwen3-8B F1 53.7", "Table 20 lists other models", "unrelated text"],
    )
    assert scores[0] > scores[1] > scores[2]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-ce")
    words = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "table",
        "figure",
        "model",
        "score",
        "the",
        "of",
        "a",
        "f1",
        "gain",
        "text",
    ]
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n")
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("backend", ["cross-encoder", "flag"])
def test_cross_encoders_load_and_score_a_tiny_local_model(tiny_cross_encoder: Path, backend: str) -> None:
    from interleaf.retrieve.config import RerankConfig
    from interleaf.retrieve.registry import get_reranker

    reranker = get_reranker(RerankConfig(backend=backend, model=str(tiny_cross_encoder)))
    assert reranker is not None
    scores = reranker.score("which model has the best f1", ["table of f1 score", "figure", "text gain"])
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert scores == reranker.score("which model has the best f1", ["table of f1 score", "figure", "text gain"])
