"""MAVIS's answer metrics (mavis.txt §4, §5.6), with the judge prompts of its earlier version RefLVQA
(reflvqa.txt Appendix B.1, Tables 11-13, adapted in prompts/judge_*.md).

Judge scores are three-level: 1 (fully), 0.5 (partially), 0 (not).
- Groundedness recall (§4.2): s(a_i, C_i) of each answer sentence against all its cited quotes,
  averaged over all n sentences; a sentence citing nothing scores 0 ("not supported means there is
  no evidence or no cited documents", RefLVQA §5.2).
- Groundedness precision (§4.2): per citing sentence, the mean of s(a_i, c_ij) over its citations,
  averaged over the citing sentences (§4.2 writes 1/n over all sentences, but a sentence with no
  citation has no mean to take). A citation of a quote outside the context scores 0 without asking.
  For a sentence citing one quote both requests are the same, so one reply serves both.
  Per modality (§5.6), the mean over all citations of that modality.
- Completeness (§4.1): c(g_j, A) of each atomic fact of the gold answer, averaged over the facts.
  Facts come from `QuestionRecord.atomic_facts`, else the judge extracts them from the reference
  answer (or the short answer) with prompts/atomic_facts.md (MAVIS §3.2 extracts them with GPT-4.1).
- Relevance (§4.1): r(a_i, Q) of each answer sentence, averaged over the sentences (MAVIS's
  three levels; RefLVQA rated the whole answer 1-7, prompts/judge_relevance.md adapts its Table 13).
- Utilisation (§5.6, offline): per modality, quotes cited / quotes retrieved, averaged over the
  questions whose context has quotes of that modality.
A question with any failed or unparsable reply gets no value for that metric; failures are counted.
F1s (Table 4's representative values) are the harmonic means of the aggregated means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from interleaf.evaluate.metrics.judge import (
    FamilyScores,
    Job,
    JudgeTally,
    clean_reply,
    judge_note,
    mean_metric,
    parse_label,
    quote_parts,
    run_jobs,
)
from interleaf.evaluate.metrics.records import (
    MODALITIES,
    MetricValue,
    QuestionRecord,
    QuestionScores,
    answer_sentences,
    statement,
    sum_counts,
    unique_citations,
)
from interleaf.generate.protocol import ChatModel, ChatRequest, CheckedSentence, ContextQuote, ImageLoader
from interleaf.prompts import load_prompt

SUPPORT = {"fully support": 1.0, "partially support": 0.5, "not support": 0.0, "no support": 0.0}
COMPLETE = {"fully complete": 1.0, "partially complete": 0.5, "not complete": 0.0, "incomplete": 0.0}
RELEVANT = {"fully relevant": 1.0, "partially relevant": 0.5, "not relevant": 0.0, "irrelevant": 0.0}


def parse_support(text: str) -> float | None:
    return parse_label(text, SUPPORT)


def parse_complete(text: str) -> float | None:
    return parse_label(text, COMPLETE)


def parse_relevant(text: str) -> float | None:
    return parse_label(text, RELEVANT)


def parse_facts(text: str) -> tuple[str, ...] | None:
    """The last JSON array of strings in the reply, else its "- " bullet lines; None when neither."""
    cleaned = clean_reply(text)
    for match in reversed(list(re.finditer(r"\[[^\[\]]*\]", cleaned, re.DOTALL))):
        try:
            items = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(items, list) and items and all(isinstance(i, str) for i in items):
            facts = tuple(i.strip() for i in items if i.strip())
            if facts:
                return facts
    bullets = tuple(m.strip() for m in re.findall(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", cleaned, re.MULTILINE))
    return bullets or None


def utilisation_values(record: QuestionRecord) -> dict[str, float | None]:
    """§5.6's document utilisation ratio per modality: cited / retrieved quotes of that modality."""
    values: dict[str, float | None] = {}
    for modality in MODALITIES:
        retrieved = set(record.context_ids(modality))
        cited = set(record.cited.of(modality)) & retrieved
        values[f"utilisation_{modality}"] = len(cited) / len(retrieved) if retrieved else None
    return values


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean when every value is known; None when one is missing or there is none."""
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def _extract_facts(
    records: Sequence[QuestionRecord], judge: ChatModel, tally: JudgeTally, max_tokens: int | None
) -> list[tuple[str, ...] | None]:
    """Each question's atomic facts: given, else extracted from its gold answer by the judge."""
    facts: list[tuple[str, ...] | None] = [r.atomic_facts for r in records]
    jobs = []
    for qi, record in enumerate(records):
        source = record.reference_answer or record.short_answer
        if record.atomic_facts is None and source:
            user = load_prompt("atomic_facts").render(question=record.question, answer=source)
            jobs.append(Job(qi, "facts", (), ChatRequest(user=user, max_tokens=max_tokens), parse_facts))
    for job, verdict in zip(jobs, run_jobs(judge, jobs, tally), strict=True):
        facts[job.question] = verdict.value
    return facts


def _jobs(
    qi: int,
    record: QuestionRecord,
    facts: tuple[str, ...],
    load_image: ImageLoader | None,
    max_tokens: int | None,
) -> list[Job]:
    """One question's judge requests: each fact (completeness), each sentence (relevance, support by
    all its cited quotes), each citation (support by that quote alone)."""
    jobs = []
    for fi, fact in enumerate(facts):
        user = load_prompt("judge_completeness").render(answer=record.answer_markdown, statement=fact)
        jobs.append(Job(qi, "completeness", (fi,), ChatRequest(user=user, max_tokens=max_tokens), parse_complete))
    for si, sentence in enumerate(answer_sentences(record.checked) if record.checked else []):
        text = statement(sentence)
        user = load_prompt("judge_relevance").render(question=record.question, sentence=text)
        jobs.append(Job(qi, "relevance", (si,), ChatRequest(user=user, max_tokens=max_tokens), parse_relevant))
        quotes = _cited_quotes(record, sentence)
        found = [q for q in quotes if q is not None]
        if found:
            request = _support_request(record, text, found, load_image, max_tokens)
            jobs.append(Job(qi, "recall", (si,), request, parse_support))
        if len(quotes) == 1:
            continue  # one citation: its precision request is the recall request, answered once
        for ci, quote in enumerate(quotes):
            if quote is not None:
                request = _support_request(record, text, [quote], load_image, max_tokens)
                jobs.append(Job(qi, "precision", (si, ci), request, parse_support))
    return jobs


def _cited_quotes(record: QuestionRecord, sentence: CheckedSentence) -> list[ContextQuote | None]:
    """The quotes a sentence cites, None for a citation outside the context."""
    return [record.quote(c.quote_id) if c.quote_id else None for c in unique_citations(sentence)]


def _question_values(
    qi: int,
    record: QuestionRecord,
    n_facts: int,
    answers: dict[tuple[int, str, tuple[int, ...]], float | None],
    counts: dict[str, int],
) -> dict[str, float | None]:
    row: dict[str, float | None] = {
        "completeness": _mean([answers[(qi, "completeness", (fi,))] for fi in range(n_facts)]),
        "groundedness_recall": None,
        "groundedness_precision": None,
        "relevance": None,
    }
    if record.checked is None:
        return row
    sentences = answer_sentences(record.checked)
    recalls: list[float | None] = []
    precisions: list[float | None] = []
    for si, sentence in enumerate(sentences):
        quotes = _cited_quotes(record, sentence)
        if not quotes:
            recalls.append(0.0)  # cites nothing: not supported
            continue
        recalls.append(answers[(qi, "recall", (si,))] if any(q is not None for q in quotes) else 0.0)
        per_citation: list[float | None] = []
        for ci, quote in enumerate(quotes):
            if quote is None:
                per_citation.append(0.0)  # outside the context: irrelevant, not asked
                continue
            score = answers[(qi, "recall", (si,))] if len(quotes) == 1 else answers[(qi, "precision", (si, ci))]
            per_citation.append(score)
            if score is not None:  # per-modality precision (§5.6), kept as integer counts
                key = f"mavis_{quote.modality}_support_x2"
                counts[key] = counts.get(key, 0) + round(2 * score)
                key = f"mavis_{quote.modality}_citations_judged"
                counts[key] = counts.get(key, 0) + 1
        precisions.append(_mean(per_citation))
    row["groundedness_recall"] = _mean(recalls)
    row["groundedness_precision"] = _mean(precisions)
    row["relevance"] = _mean([answers[(qi, "relevance", (si,))] for si in range(len(sentences))])
    return row


def judge_mavis(
    records: Sequence[QuestionRecord], judge: ChatModel, load_image: ImageLoader | None, max_tokens: int | None
) -> FamilyScores:
    tally = JudgeTally.empty("mavis", len(records))
    facts = _extract_facts(records, judge, tally, max_tokens)  # first: completeness needs them
    jobs = [job for qi, r in enumerate(records) for job in _jobs(qi, r, facts[qi] or (), load_image, max_tokens)]
    verdicts = run_jobs(judge, jobs, tally)
    answers = {(job.question, job.kind, job.slot): verdict.value for job, verdict in zip(jobs, verdicts, strict=True)}
    values = [_question_values(qi, r, len(facts[qi] or ()), answers, tally.counts[qi]) for qi, r in enumerate(records)]
    return FamilyScores(values, tally)


def _support_request(
    record: QuestionRecord,
    text: str,
    quotes: Sequence[ContextQuote],
    load_image: ImageLoader | None,
    max_tokens: int | None,
) -> ChatRequest:
    documents, images = quote_parts(quotes, load_image)
    user = load_prompt("judge_groundedness").render(question=record.question, statement=text, documents=documents)
    return ChatRequest(user=user, images=images, max_tokens=max_tokens)


def _f1(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return 2 * a * b / (a + b) if a + b else 0.0


def aggregate_mavis(scores: Sequence[QuestionScores], skipped: str | None) -> list[MetricValue]:
    note = judge_note(scores, "mavis", skipped)
    out = [
        mean_metric(scores, key, note)
        for key in ("groundedness_recall", "groundedness_precision", "completeness", "relevance")
    ]
    by_name = {m.name: m for m in out}
    for name, (a, b) in {
        "groundedness_f1": ("groundedness_recall", "groundedness_precision"),
        "informativeness_f1": ("completeness", "relevance"),
    }.items():
        value = _f1(by_name[a].value, by_name[b].value)
        why = f"; {note}" if value is None and note else ""  # "not computed: ..." says why there is none
        out.append(MetricValue(name, value, min(by_name[a].n, by_name[b].n), f"harmonic mean of {a} and {b}{why}"))
    total = sum_counts(scores)
    for modality in MODALITIES:
        judged_n = total.get(f"mavis_{modality}_citations_judged", 0)
        value = total.get(f"mavis_{modality}_support_x2", 0) / 2 / judged_n if judged_n else None
        out.append(
            MetricValue(
                f"groundedness_precision_{modality}",
                value,
                judged_n,
                f"mean support of each {modality} citation (MAVIS §5.6); {note}",
            )
        )
    for modality in MODALITIES:
        out.append(
            mean_metric(
                scores, f"utilisation_{modality}", f"{modality} quotes cited / {modality} quotes in the context (§5.6)"
            )
        )
    return out
