"""Metrics broken down by what a question is: its type, its evidence modalities, whether its evidence
spans pages or modalities, its document; and quote selection by the gold quote's context position.

MMDocRAG reports these slices in Appendix B.4-B.6 (document type, question type, evidence type) and
Figure 11 (single vs multiple images, single vs cross page, single vs cross modal); §4.6 breaks quote
selection down by position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")
V = TypeVar("V")

# What a record belongs to: one group, several (a question with table and text evidence is in both
# evidence groups, as in MMDocRAG B.6), or none (left out of this breakdown).
GroupKey = Callable[[R], str | Sequence[str] | None]


def natural_key(group: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", group)]


def breakdown(records: Iterable[R], key: GroupKey[R], metric_fn: Callable[[list[R]], V]) -> dict[str, V]:
    """`metric_fn` over the records of each group, groups in natural order ("2" before "10")."""
    groups: dict[str, list[R]] = {}
    for record in records:
        found = key(record)
        if found is None:
            continue
        for group in [found] if isinstance(found, str) else dict.fromkeys(found):
            groups.setdefault(group, []).append(record)
    return {group: metric_fn(groups[group]) for group in sorted(groups, key=natural_key)}


@dataclass(frozen=True)
class EvidenceFacts:
    """What the breakdowns need to know about one question's gold evidence."""

    doc_name: str
    question_type: str | None
    evidence_types: tuple[str, ...]  # lower-case, unique, sorted: text, table, figure, chart, ...
    gold_pages: frozenset[tuple[str, int]]  # (document, 0-based page) of every gold quote or evidence item
    gold_modalities: frozenset[str]  # text / image, of the gold quotes
    n_gold_images: int

    @staticmethod
    def normalise_types(types: Iterable[str]) -> tuple[str, ...]:
        # MMDocRAG writes the same type in several cases and orders ("Text", "table").
        return tuple(sorted({t.strip().lower() for t in types if t.strip()}))


def question_type_key(facts: EvidenceFacts) -> str | None:
    return facts.question_type or None


def evidence_type_key(facts: EvidenceFacts) -> tuple[str, ...] | None:
    return facts.evidence_types or None


def page_span_key(facts: EvidenceFacts) -> str | None:
    if not facts.gold_pages:
        return None
    return "cross-page" if len(facts.gold_pages) > 1 else "single-page"


def modality_span_key(facts: EvidenceFacts) -> str | None:
    # MMDocRAG counts a question cross-modal when its evidence has several modality types (§2.2: 2,503
    # questions "requiring multiple evidence modalities"); without types, the gold quotes' text/image split.
    kinds = facts.evidence_types or tuple(facts.gold_modalities)
    if not kinds:
        return None
    return "cross-modal" if len(kinds) > 1 else "single-modal"


def image_count_key(facts: EvidenceFacts) -> str:
    # Figure 11(a): questions with one image quote as evidence against several.
    return {0: "no-image", 1: "single-image"}.get(facts.n_gold_images, "multi-image")


def document_key(facts: EvidenceFacts) -> str:
    return facts.doc_name


# The standard breakdowns by name, as `eval_metrics.breakdown` records them.
FACT_KEYS: dict[str, Callable[[EvidenceFacts], str | Sequence[str] | None]] = {
    "question_type": question_type_key,
    "evidence_type": evidence_type_key,
    "page_span": page_span_key,
    "modality_span": modality_span_key,
    "image_count": image_count_key,
    "document": document_key,
}


def by_facts(name: str, facts_of: Callable[[R], EvidenceFacts]) -> GroupKey[R]:
    """A `breakdown` key for records from which `facts_of` gets the facts: `by_facts("page_span", ...)`."""
    fact_key = FACT_KEYS[name]
    return lambda record: fact_key(facts_of(record))


# -- selection by position (MMDocRAG §4.6, Figure 8) ----------------------------------------------------


@dataclass(frozen=True)
class PositionSelection:
    position: int  # 1-based position in the context as given
    gold: int  # gold quotes found at this position, over all questions
    cited: int  # of those, how many the answer cited

    @property
    def rate(self) -> float | None:
        return self.cited / self.gold if self.gold else None


def selection_by_position(
    samples: Iterable[tuple[Sequence[str], Collection[str], Collection[str]]],
) -> list[PositionSelection]:
    """For each context position 1..N, the share of gold quotes at that position that were cited.

    A sample is (context quote ids in order, gold quote ids, cited quote ids). Pass the order the model
    saw: MMDocRAG's prompt lists text quotes first, then images, so its positions 1-12 are text and
    13-20 images in the 20-quote setting (§4.6). Positions no gold quote ever took have gold 0, rate None.
    """
    gold_at: dict[int, int] = {}
    cited_at: dict[int, int] = {}
    longest = 0
    for context, gold, cited in samples:
        longest = max(longest, len(context))
        for position, quote_id in enumerate(context, start=1):
            if quote_id in gold:
                gold_at[position] = gold_at.get(position, 0) + 1
                cited_at[position] = cited_at.get(position, 0) + (quote_id in cited)
    return [PositionSelection(p, gold_at.get(p, 0), cited_at.get(p, 0)) for p in range(1, longest + 1)]
