"""Answer metrics of one question set: records from the stored answers (read back through
interleaf/stored_answers.py), then every metric of the papers (interleaf/evaluate/metrics), overall
and by breakdown, and selection by context position (MMDocRAG §4.6), as rows of `eval_metrics`.

A question's gold quotes are the context quotes matching its evidence (corpus README: same document
and page, the needle in the quote's text); its reference answer is the question file's `answer`; its
`must_include` and `answerable` judge the answer itself (metrics/correctness.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from interleaf.evaluate.breakdowns import FACT_KEYS, EvidenceFacts, breakdown, selection_by_position
from interleaf.evaluate.metrics import (
    ByModality,
    MetricValue,
    QuestionRecord,
    QuestionScores,
    aggregate,
    cited_from_answer,
    ranked_lists,
    retrieval_metrics,
    score_questions,
)
from interleaf.evaluate.metrics.records import invalid_citation_id
from interleaf.evaluate.recall import Evidence, matching_quotes
from interleaf.generate.protocol import ChatModel, ImageLoader
from interleaf.index.corpus import QuoteCorpus
from interleaf.stored_answers import StoredAnswer

INVALID_PREFIX = invalid_citation_id("text", 0).split(":")[0]


@dataclass(frozen=True)
class Answered:
    """One question with everything its metrics need."""

    record: QuestionRecord
    facts: EvidenceFacts


def answered_questions(
    questions: list[dict[str, Any]],
    answers: Sequence[StoredAnswer],
    corpus: QuoteCorpus,
    doc_ids: dict[str, str],
) -> list[Answered]:
    """Each stored answer with its question's gold: evidence quotes among its context, reference
    answer, and the question file's `must_include` / `answerable` (correctness.py)."""
    by_question = {a.question_id: a for a in answers}
    out = []
    for q in questions:
        answer = by_question.get(q["question_id"])
        if answer is None:
            continue
        evidence = [Evidence(int(e["page"]), e.get("modality", "text"), e["needle"]) for e in _evidence(q)]
        matching: set[str] = set()
        for e in evidence:
            matching |= matching_quotes(corpus, doc_ids.get(q["doc_name"] or ""), e)
        gold = ByModality(
            tuple(c.quote_id for c in answer.context if c.modality == "text" and c.quote_id in matching),
            tuple(c.quote_id for c in answer.context if c.modality == "image" and c.quote_id in matching),
        )
        must_include = tuple(q["must_include"]) if q.get("must_include") is not None else None
        record = answer_record(answer, gold, q["answer"] or "", q["answer"], q["question_type"])
        record = replace(record, must_include=must_include, answerable=q.get("answerable"))
        facts = EvidenceFacts(
            doc_name=q["doc_name"] or "",
            question_type=q["question_type"],
            evidence_types=EvidenceFacts.normalise_types(e.modality for e in evidence),
            gold_pages=frozenset((q["doc_name"] or "", e.page - 1) for e in evidence),
            gold_modalities=frozenset(m for m in ("text", "image") if gold.of(m)),
            n_gold_images=len(gold.image),
        )
        out.append(Answered(record, facts))
    return out


def answer_record(
    answer: StoredAnswer, gold: ByModality, short_answer: str, reference: str | None, question_type: str | None
) -> QuestionRecord:
    """A stored answer as the metrics read it, cited quotes under both parsings (citation_sets.py)."""
    return QuestionRecord(
        question_id=answer.question_id,
        question=answer.question,
        gold=gold,
        cited=cited_from_answer(answer.raw_md, answer.context),
        cited_mmdocrag=cited_from_answer(answer.raw_md, answer.context, "mmdocrag"),
        context=answer.context,
        answer_markdown=answer.answer_md,
        short_answer=short_answer,
        reference_answer=reference,
        checked=answer.checked,
        question_type=question_type,
        abstained=not answer.answerable,
        addresses_question=answer.addresses_question,
        words=answer.words,
    )


def _evidence(q: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(q["evidence_json"]) if q["evidence_json"] else []


def metric_rows(
    answered: Sequence[Answered],
    judge: ChatModel | None,
    families: Sequence[str],
    max_tokens: int,
    load_image: ImageLoader | None,
) -> list[dict[str, Any]]:
    """`eval_metrics` rows (without the set's key columns): overall, each breakdown, by position."""
    records = [a.record for a in answered]
    scores = score_questions(records, judge, load_image=load_image, families=families, max_tokens=max_tokens)
    facts = {a.record.question_id: a.facts for a in answered}
    rows = _rows(aggregate(scores, judge is not None, families), "all", "all")
    for name in FACT_KEYS:

        def key(s: QuestionScores, name: str = name) -> Any:
            return FACT_KEYS[name](facts[s.question_id])

        groups = breakdown(scores, key, lambda subset: aggregate(subset, judge is not None, families))
        for group, values in groups.items():
            rows += _rows(values, name, group)
    samples = [([c.quote_id for c in r.context], set(r.gold.all), set(r.cited.all)) for r in records]
    for p in selection_by_position(samples):
        rows.append(_row("selection_rate", p.rate, p.gold, "position", str(p.position), "gold quotes cited"))
    return rows


def retrieval_rows(hits: list[dict[str, Any]], gold: dict[str, set[str]], ks: Sequence[int]) -> list[dict[str, Any]]:
    """recall@k and NDCG@k per retriever and per clause, against the gold quotes of the corpus."""
    rows = []
    for by, skip in ((("retriever",), False), (("retriever", "clause_id"), True)):
        lists = ranked_lists(hits, by)
        breakdown_name = "+".join(by)
        for m in retrieval_metrics(lists, gold, ks, skip_missing=skip):
            rows.append(_row(m.name, m.value, m.n, breakdown_name, m.group, m.note))
    return rows


def citation_validity(answered: Sequence[Answered]) -> dict[str, Any]:
    """The share of the quotes answers cite that were in their context (each cited quote counted
    once per answer, as written, before the checker drops the others)."""
    cited = [q for a in answered for q in a.record.cited.all]
    invalid = sum(q.startswith(INVALID_PREFIX) for q in cited)
    value = 1 - invalid / len(cited) if cited else None
    return _row("citations_valid", value, len(cited), "all", "all", f"{invalid} cited quotes not in the context")


def _rows(values: Sequence[MetricValue], breakdown_name: str, group: str) -> list[dict[str, Any]]:
    return [_row(v.name, v.value, v.n, breakdown_name, v.group or group, v.note) for v in values]


def _row(metric: str, value: float | None, n: int, breakdown_name: str, group: str, note: str) -> dict[str, Any]:
    return {"metric": metric, "value": value, "n": n, "breakdown": breakdown_name, "group_name": group, "note": note}
