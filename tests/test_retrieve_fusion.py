"""Fusion, quotas and the rerankers (the cross-encoders on a tiny random model built here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleaf.retrieve.fusion import Hit, apply_quota, page_fusion, rrf
from interleaf.retrieve.lexical import LexicalReranker
from tests.tiny_models import build_cross_encoder


def test_rrf_max_keeps_a_top_hit_of_one_clause_above_middling_ones() -> None:
    hits = [Hit(0, "bm25", "top", 1, 9.0)] + [Hit(c, "bm25", "mid", 5, 1.0) for c in range(4)]
    assert rrf(hits, {}, {}, 20, "max")[0][0] == "top"
    assert rrf(hits, {}, {}, 20, "sum")[0][0] == "mid"


def test_rrf_weights_retrievers() -> None:
    hits = [Hit(0, "a", "x", 1, 1.0), Hit(0, "b", "y", 1, 1.0)]
    assert rrf(hits, {"a": 0.5, "b": 1.0}, {}, 20)[0][0] == "y"


def test_page_fusion_lifts_the_other_quotes_of_a_page_with_several_strong_hits() -> None:
    names = ["table", "lone", "para", "caption", "near"]
    ranking = [(q, 1 / (10 + rank)) for rank, q in enumerate(names, start=1)]  # an RRF ranking, k = 10
    page_of = {"table": ("d", 9), "para": ("d", 9), "near": ("d", 9), "lone": ("d", 2), "caption": ("d", 5)}
    fused = [q for q, _ in page_fusion(ranking, page_of, k=10, weight=0.5)]
    assert fused.index("near") < fused.index("caption")  # page 9 holds three hits, page 5 one
    assert fused[:2] == ["table", "lone"]  # a page prior re-orders neighbours; it does not bury a top hit
    assert page_fusion(ranking, page_of, k=10, weight=0.0) == ranking


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
    return build_cross_encoder(tmp_path_factory.mktemp("tiny-ce"))


@pytest.mark.parametrize("backend", ["cross-encoder", "flag"])
def test_cross_encoders_load_and_score_a_tiny_local_model(tiny_cross_encoder: Path, backend: str) -> None:
    from interleaf.retrieve.config import RerankConfig
    from interleaf.retrieve.registry import get_reranker

    reranker = get_reranker(RerankConfig(backend=backend, model=str(tiny_cross_encoder)))
    assert reranker is not None
    scores = reranker.score("which model has the best f1", ["table of f1 score", "figure", "text gain"])
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert scores == reranker.score("which model has the best f1", ["table of f1 score", "figure", "text gain"])
