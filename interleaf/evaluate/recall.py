"""Pure recall computation: evidence (document, page, needle) against retrieved contexts.

A quote matches a piece of evidence when it comes from the same document and page and its text,
caption or (image quotes) OCR / VLM text contains the needle (`interleaf.evidence.contains_needle`).
Recall@k is the share of evidence items matched by a quote within the context of budget k.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from interleaf.evidence import contains_needle
from interleaf.index.corpus import QuoteCorpus
from interleaf.kinds import modality_of


@dataclass(frozen=True)
class Evidence:
    page: int  # 1-based, as in the qa file
    modality: str  # text, table, figure, chart
    needle: str

    @property
    def group(self) -> str:
        return modality_of(self.modality)  # evidence modalities are quote kinds: table, figure, chart...


@dataclass(frozen=True)
class QAItem:
    id: str
    doc: str  # file name = documents.name
    question: str
    evidence: tuple[Evidence, ...]


def read_qa(path: str | Path) -> list[QAItem]:
    items = []
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        evidence = tuple(
            Evidence(int(e["page"]), e.get("modality", "text"), e["needle"]) for e in raw.get("evidence", [])
        )
        items.append(QAItem(str(raw["id"]), raw["doc"], raw["question"], evidence))
    return items


def matching_quotes(corpus: QuoteCorpus, doc_id: str | None, evidence: Evidence) -> set[str]:
    if doc_id is None:
        return set()
    return {
        q
        for q, d, p, texts in zip(corpus.quote_ids, corpus.doc_ids, corpus.page_idx, corpus.match_texts, strict=True)
        if d == doc_id and p == evidence.page - 1 and contains_needle(texts, evidence.needle)
    }


@dataclass
class EvidenceOutcome:
    question_id: str
    evidence_idx: int
    group: str
    matches: set[str]
    first_rank: dict[int, int | None]  # budget -> 1-based position of the first matching quote
    modality: str = ""  # the evidence's own: text, table, figure, chart...


def outcomes(
    corpus: QuoteCorpus, items: list[QAItem], doc_ids: dict[str, str], contexts: dict[str, dict[int, list[str]]]
) -> list[EvidenceOutcome]:
    out = []
    for item in items:
        doc_id = doc_ids.get(item.doc)
        for i, ev in enumerate(item.evidence):
            matches = matching_quotes(corpus, doc_id, ev)
            ranks: dict[int, int | None] = {}
            for budget, ctx in contexts.get(item.id, {}).items():
                ranks[budget] = next((pos for pos, q in enumerate(ctx, start=1) if q in matches), None)
            out.append(EvidenceOutcome(item.id, i, ev.group, matches, ranks, ev.modality.strip().lower()))
    return out


def _groups(results: list[EvidenceOutcome]) -> dict[str, list[EvidenceOutcome]]:
    """text, image, then each kind of image evidence apart (table, figure, chart...), then all."""
    groups: dict[str, list[EvidenceOutcome]] = {g: [r for r in results if r.group == g] for g in ("text", "image")}
    for modality in sorted({r.modality for r in results if r.group == "image" and r.modality}):
        groups[modality] = [r for r in results if r.group == "image" and r.modality == modality]
    groups["all"] = list(results)
    return groups


def recall_table(results: list[EvidenceOutcome], budgets: list[int]) -> dict[str, dict[int, float]]:
    """{group: {k: recall}} for the groups of `_groups`; groups without evidence are left out."""
    return {
        group: {k: sum(r.first_rank.get(k) is not None for r in chosen) / len(chosen) for k in budgets}
        for group, chosen in _groups(results).items()
        if chosen
    }


def counts(results: list[EvidenceOutcome]) -> dict[str, int]:
    return {group: len(chosen) for group, chosen in _groups(results).items()}
