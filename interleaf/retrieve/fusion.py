"""Weighted reciprocal-rank fusion, the lists fused into its head after it, pages' turns and modality quotas."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

from interleaf.describe.table_grid import number_flags


@dataclass(frozen=True)
class Hit:
    clause_id: int
    retriever: str
    quote_id: str
    rank: int  # 1-based
    score: float


def rrf(
    hits: Iterable[Hit],
    retriever_weight: dict[str, float],
    clause_weight: dict[int, float],
    k: float,
    clause_fusion: str = "max",
) -> list[tuple[str, float]]:
    """Weighted reciprocal-rank fusion: sum over retrievers of w_r * f_c(w_c / (k + rank)).

    f_c over a retriever's clauses is `sum` (plain RRF over every list) or `max` (the best clause
    counts): with `sum`, a quote ranked middling by every clause outranks one that a single clause
    found at the top, which is exactly the evidence a multi-part question needs per part.
    """
    per: dict[tuple[str, str], float] = defaultdict(float)
    for h in hits:
        value = clause_weight.get(h.clause_id, 1.0) / (k + h.rank)
        key = (h.quote_id, h.retriever)
        per[key] = max(per[key], value) if clause_fusion == "max" else per[key] + value
    fused: dict[str, float] = defaultdict(float)
    for (quote_id, retriever), value in per.items():
        fused[quote_id] += retriever_weight.get(retriever, 1.0) * value
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def page_fusion(
    ranking: list[tuple[str, float]], page_of: Mapping[str, Hashable], k: float, weight: float, depth: int = 50
) -> list[tuple[str, float]]:
    """Add the rank of each quote's page to its score, as one more list in the reciprocal-rank sum.

    Evidence clusters: a page holding several strong hits (a table, the paragraph citing it) is
    likely the page the answer is on, and its other quotes ("the surrounding text") deserve a
    place above lone hits elsewhere. Pages are ranked by the summed scores of their quotes among
    the first `depth` of the ranking. Any grouping works the same way (`page_of`: quote -> section).
    """
    if weight <= 0 or not ranking:
        return ranking
    page_score: dict[Hashable, float] = defaultdict(float)
    for quote_id, score in ranking[:depth]:
        page_score[page_of[quote_id]] += score
    page_rank = {page: r for r, page in enumerate(sorted(page_score, key=lambda p: -page_score[p]), start=1)}
    fused = [(q, s + (weight / (k + page_rank[page_of[q]]) if page_of[q] in page_rank else 0.0)) for q, s in ranking]
    return sorted(fused, key=lambda kv: (-kv[1], kv[0]))


def number_share(text: str) -> float:
    """The share of the text's whitespace tokens that are numbers ("1,383", "(34)", "$6.31", "12%")."""
    flags = number_flags(text)
    return sum(flags) / len(flags) if flags else 0.0


def numbers_lift(
    ranking: list[tuple[str, float]], share: Mapping[str, float], head: int, k: float, weight: float
) -> list[tuple[str, float]]:
    """The ranking's first `head` quotes with one more reciprocal-rank list fused in, weighted
    `weight`: the same quotes ordered by `share` (their share of number tokens, number_share). For a
    question that asks for a quantity, the answer's expected type is evidence, as in factoid question
    answering: a financial statement or a table of results states the question's words once, among
    many numbers, and sinks under every paragraph that repeats them. Only the order moves: each quote
    keeps its score, the retrievers' relevance, which the offline composer reads its context by
    (offline.most_relevant_first), as pages_take_turns keeps it. The rest keeps its order below the
    head. 0: off."""
    if weight <= 0 or head <= 0:
        return ranking
    top, tail = ranking[:head], ranking[head:]
    # a quote's rank is one more than the count of quotes holding more numbers: equal shares (a head
    # of paragraphs holding none) are lifted alike and keep their order
    negated = sorted(-share[q] for q, _ in top)
    by_share = {q: bisect.bisect_left(negated, -share[q]) + 1 for q, _ in top}
    lifted = sorted(top, key=lambda kv: -(kv[1] + weight / (k + by_share[kv[0]])))
    return lifted + tail


def pages_take_turns(
    ranking: list[tuple[str, float]], page_of: Mapping[str, Hashable], head: int
) -> list[tuple[str, float]]:
    """The ranking's first `head` quotes reordered so that pages take turns: each page's n-th quote
    among them comes after every page's (n-1)-th, each turn in rank order; the rest keeps its order.

    Result diversification (Carbonell & Goldstein's maximal marginal relevance, with "same page" as
    the redundancy): a page's second paragraph adds less than another page's first, and a question
    whose evidence page is ranked second among pages loses it from a short context when the first
    page holds several of the top quotes. The head's set is unchanged, only its order; the contexts
    cut from it by modality quotas may take other quotes past the head. 0: off."""
    if head <= 0:
        return ranking
    turn: dict[Hashable, int] = defaultdict(int)
    keyed = []
    for i, (quote_id, score) in enumerate(ranking[:head]):
        page = page_of[quote_id]
        keyed.append((turn[page], i, (quote_id, score)))
        turn[page] += 1
    return [item for _, _, item in sorted(keyed)] + ranking[head:]


def apply_quota(
    ranked: list[tuple[str, float]], modality: dict[str, str], budget: int, quota: tuple[int, int] | None
) -> list[tuple[str, float]]:
    """The context of `budget` quotes: at most `images` image quotes and `texts` text quotes by rank;
    slots one modality cannot fill go to the other (a one-page document may hold no image)."""
    if quota is None:
        return ranked[:budget]
    images, texts = quota
    caps = {"image": images, "text": texts}
    chosen, spill = [], []
    for item in ranked:
        m = modality.get(item[0], "text")
        if caps.get(m, 0) > 0:
            caps[m] -= 1
            chosen.append(item)
        else:
            spill.append(item)
        if len(chosen) >= budget:
            break
    chosen += spill[: max(0, budget - len(chosen))]
    order = {q: i for i, (q, _) in enumerate(ranked)}
    return sorted(chosen, key=lambda it: order[it[0]])[:budget]
