"""Retrieval quality of ranked quote lists against gold quote sets: recall@k and NDCG@k.

recall@k (MMDocRAG §4.1, "the proportion of the ground truth quote evidence that is successfully
retrieved"): |top-k ∩ gold| / |gold|. NDCG@k with binary relevance: DCG = Σ_{i ≤ k, q_i ∈ gold}
1 / log2(i + 1), divided by the DCG of an ideal list with min(|gold|, k) relevant quotes first.
Both are per question and averaged over the questions that have gold quotes (a question without
gold has no value).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from interleaf.evaluate.metrics.records import MetricValue


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(set(ranked[:k]) & gold_set) / len(gold_set)


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    seen: set[str] = set()
    dcg = 0.0
    for position, quote_id in enumerate(ranked[:k], start=1):
        if quote_id in gold_set and quote_id not in seen:  # a quote listed twice gains once
            dcg += 1 / math.log2(position + 1)
        seen.add(quote_id)
    ideal = sum(1 / math.log2(position + 1) for position in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def ranked_lists(
    rows: Iterable[Mapping[str, object]], by: Sequence[str] = ("retriever", "clause_id")
) -> dict[str, dict[str, list[str]]]:
    """Rows of the hits table (question_id, quote_id, rank and the `by` columns) to ranked lists:
    {"retriever=bm25 clause_id=0": {question_id: [quote_id, ...] by rank}}."""
    collected: dict[str, dict[str, list[tuple[int, str]]]] = {}
    for row in rows:
        group = " ".join(f"{column}={row[column]}" for column in by)
        ranks = collected.setdefault(group, {}).setdefault(str(row["question_id"]), [])
        ranks.append((int(row["rank"]), str(row["quote_id"])))  # type: ignore[call-overload]
    return {
        group: {question: [q for _, q in sorted(ranks)] for question, ranks in questions.items()}
        for group, questions in collected.items()
    }


def retrieval_metrics(
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    gold: Mapping[str, Collection[str]],
    ks: Sequence[int],
    skip_missing: bool = False,
) -> list[MetricValue]:
    """recall@k and NDCG@k for every run (a retriever, a clause, a fused list...) and every k.

    `runs`: {group label: {question_id: ranked quote ids}}; `gold`: {question_id: gold quote ids}.
    By default every question with gold counts in every run (a question the run has no list for
    scores 0), so runs compare on the same questions. `skip_missing` leaves such questions out:
    for per-clause runs, where a question expanded into fewer clauses has no list for the others."""
    with_gold = {q: g for q, g in gold.items() if g}
    out: list[MetricValue] = []
    for group, lists in runs.items():
        questions = {q: g for q, g in with_gold.items() if q in lists or not skip_missing}
        for k in ks:
            for name, metric in (("recall", recall_at_k), ("ndcg", ndcg_at_k)):
                present = [v for q, g in questions.items() if (v := metric(lists.get(q, ()), g, k)) is not None]
                value = sum(present) / len(present) if present else None
                note = f"averaged over {len(present)} questions with gold quotes"
                if not skip_missing and len(lists.keys() & with_gold.keys()) < len(with_gold):
                    note += f" ({len(with_gold) - len(lists.keys() & with_gold.keys())} with no list score 0)"
                out.append(MetricValue(f"{name}@{k}", value, len(present), note, group))
    return out
