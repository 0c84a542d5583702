"""recall@k and NDCG@k over ranked lists; expected values worked by hand."""

from __future__ import annotations

import math

import pytest

from interleaf.evaluate.metrics import ndcg_at_k, ranked_lists, recall_at_k, retrieval_metrics

RANKED = ["a", "x", "b", "y", "c"]
GOLD = {"a", "b", "c", "d"}


def test_recall_at_k() -> None:
    # hits at ranks 1, 3, 5 of 4 gold quotes
    assert recall_at_k(RANKED, GOLD, 1) == 1 / 4
    assert recall_at_k(RANKED, GOLD, 3) == 2 / 4
    assert recall_at_k(RANKED, GOLD, 5) == 3 / 4
    assert recall_at_k(RANKED, set(), 5) is None


def test_ndcg_at_k() -> None:
    # k = 3: DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal (3 relevant) = 1 + 1/log2(3) + 1/2 = 2.13093 -> 0.70392
    assert ndcg_at_k(RANKED, GOLD, 3) == pytest.approx(1.5 / (1.5 + 1 / math.log2(3)))
    assert ndcg_at_k(RANKED, GOLD, 3) == pytest.approx(0.70392, abs=1e-5)
    # k = 5: DCG = 1.5 + 1/log2(6) = 1.88685; ideal (4 relevant) = 2.13093 + 1/log2(5) = 2.56161 -> 0.73659
    assert ndcg_at_k(RANKED, GOLD, 5) == pytest.approx(0.73659, abs=1e-5)
    # a quote listed twice gains once: [a, a, b]: DCG = 1 + 1/log2(4) = 1.5; ideal 1 + 1/log2(3) -> 0.91972
    assert ndcg_at_k(["a", "a", "b"], {"a", "b"}, 3) == pytest.approx(0.91972, abs=1e-5)
    assert ndcg_at_k(["a"], {"a"}, 10) == 1.0
    assert ndcg_at_k(["x"], {"a"}, 10) == 0.0


def test_per_retriever_and_clause_from_hit_rows() -> None:
    rows = [  # hits-table rows, out of rank order
        {"question_id": "q1", "retriever": "bm25", "clause_id": 0, "rank": 3, "quote_id": "b"},
        {"question_id": "q1", "retriever": "bm25", "clause_id": 0, "rank": 1, "quote_id": "a"},
        {"question_id": "q1", "retriever": "bm25", "clause_id": 0, "rank": 2, "quote_id": "x"},
        {"question_id": "q1", "retriever": "dense", "clause_id": 0, "rank": 1, "quote_id": "d"},
        {"question_id": "q1", "retriever": "dense", "clause_id": 0, "rank": 2, "quote_id": "c"},
        {"question_id": "q1", "retriever": "bm25", "clause_id": 1, "rank": 1, "quote_id": "y"},
    ]
    runs = ranked_lists(rows)
    assert runs["retriever=bm25 clause_id=0"] == {"q1": ["a", "x", "b"]}
    gold = {"q1": GOLD, "q2": {"e"}, "q3": set()}
    got = {(m.group, m.name): m for m in retrieval_metrics(runs, gold, [2])}
    # q3 has no gold: left out; q2 has gold but no list: 0.
    # bm25 clause 0 recall@2: q1 [a, x] -> 1/4; q2 0 -> mean 1/8 over 2 questions
    assert got[("retriever=bm25 clause_id=0", "recall@2")].value == pytest.approx(1 / 8)
    assert got[("retriever=bm25 clause_id=0", "recall@2")].n == 2
    # dense recall@2: q1 [d, c] -> 2/4; q2 0 -> 1/4. NDCG@2: q1 both relevant = ideal -> 1; q2 0 -> 1/2
    assert got[("retriever=dense clause_id=0", "recall@2")].value == pytest.approx(1 / 4)
    assert got[("retriever=dense clause_id=0", "ndcg@2")].value == pytest.approx(1 / 2)
    # clause 1 found nothing relevant
    assert got[("retriever=bm25 clause_id=1", "recall@2")].value == 0.0
    # per clause, questions without a list for it are left out: dense over q1 only -> recall@2 2/4
    skipped = {(m.group, m.name): m for m in retrieval_metrics(runs, gold, [2], skip_missing=True)}
    assert skipped[("retriever=dense clause_id=0", "recall@2")].value == pytest.approx(1 / 2)
    assert skipped[("retriever=dense clause_id=0", "recall@2")].n == 1
