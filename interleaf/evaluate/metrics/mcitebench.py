"""MCiteBench's citation metrics (mcitebench.txt §4; prompts Appendix A.2 Tables 6-7; its reference
code evaluation/eval_citation_f1_source_f1_em/).

- Citation F1 (judge): for every sentence that cites, the judge rates the sentence against all its
  cited quotes together (recall: 0 / 1 / 2 for no / partial / full support, read as 0 / 0.5 / 1) and
  against each cited quote alone (precision: 0 / 1); a sentence's precision is the mean over its
  citations. Per answer, recall and precision are the means over its citing sentences, F1 their
  harmonic mean; the reported figures are means over answers. Sentences citing nothing are left
  out, and an answer with no citing sentence gets no value (as the reference code does). A citation
  of a quote outside the context gets precision 0, and a sentence with only such citations recall 0,
  without asking (as the reference). Unlike the reference, a failed or unparsable reply is not read
  as 0: the answer gets no value and the failure is counted.
- Source F1 / Exact Match (offline): the answer's cited quotes against the gold quotes, per answer,
  averaged over answers with gold. An answer citing nothing scores 0. (The reference code drops
  answers with no citing sentence from every metric; we keep them, which is stricter.)
"""

from __future__ import annotations

from collections.abc import Sequence

from interleaf.evaluate.metrics.judge import (
    FamilyScores,
    Job,
    JudgeTally,
    judge_note,
    mean_metric,
    parse_rating,
    quote_parts,
    run_jobs,
)
from interleaf.evaluate.metrics.records import (
    MetricValue,
    QuestionRecord,
    QuestionScores,
    answer_sentences,
    statement,
    unique_citations,
)
from interleaf.evaluate.metrics.selection import prf
from interleaf.generate.protocol import ChatModel, ChatRequest, ContextQuote, ImageLoader
from interleaf.prompts import load_prompt

RECALL_SCALE = {0: 0.0, 1: 0.5, 2: 1.0}  # no / partial / full support (MCiteBench §4, after LongCite)


def parse_recall(text: str) -> int | None:
    return parse_rating(text, (0, 1, 2))


def parse_precision(text: str) -> int | None:
    return parse_rating(text, (0, 1))


def source_values(record: QuestionRecord) -> dict[str, float | None]:
    """Source P / R / F1 and Exact Match (§4 eq. 1-3); None without gold quotes."""
    gold, cited = set(record.gold.all), set(record.cited.all)
    if not gold:
        return {"source_precision": None, "source_recall": None, "source_f1": None, "source_exact_match": None}
    scores = prf(gold, cited)
    return {
        "source_precision": scores.precision,
        "source_recall": scores.recall,
        "source_f1": scores.f1,
        "source_exact_match": float(cited == gold),
    }


def citation_f1(recalls: Sequence[float], precisions: Sequence[float]) -> tuple[float, float, float]:
    """One answer: mean sentence recall, mean sentence precision, their harmonic mean (0 when both are 0)."""
    recall, precision = sum(recalls) / len(recalls), sum(precisions) / len(precisions)
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return recall, precision, f1


def _request(
    template: str, sentence: str, quotes: Sequence[ContextQuote], load_image: ImageLoader | None, max_tokens: int | None
) -> ChatRequest:
    parts, images = quote_parts(quotes, load_image)
    return ChatRequest(
        user=load_prompt(template).render(statement=sentence, parts=parts), images=images, max_tokens=max_tokens
    )


def judge_mcitebench(
    records: Sequence[QuestionRecord], judge: ChatModel, load_image: ImageLoader | None, max_tokens: int | None
) -> FamilyScores:
    tally = JudgeTally.empty("mcitebench", len(records))
    jobs: list[Job] = []
    # fixed scores the reference gives without asking: (question, sentence) -> recall; (q, s, c) -> precision
    fixed_recall: dict[tuple[int, int], float] = {}
    fixed_precision: dict[tuple[int, int, int], float] = {}
    citing: list[list[tuple[int, int]]] = [[] for _ in records]  # per question: (sentence, n citations)
    for qi, record in enumerate(records):
        if record.checked is None:
            continue
        for si, sentence in enumerate(answer_sentences(record.checked)):
            citations = unique_citations(sentence)
            if not citations:
                continue
            citing[qi].append((si, len(citations)))
            quotes = [record.quote(c.quote_id) if c.quote_id else None for c in citations]
            found = [q for q in quotes if q is not None]
            text = statement(sentence)
            if not found:
                fixed_recall[(qi, si)] = 0.0
            else:  # Table 6: the sentence against all its cited quotes together
                request = _request("judge_citation_recall", text, found, load_image, max_tokens)
                jobs.append(Job(qi, "recall", (si,), request, parse_recall))
            for ci, quote in enumerate(quotes):
                if quote is None:
                    fixed_precision[(qi, si, ci)] = 0.0
                else:  # Table 7: the sentence against each cited quote alone
                    request = _request("judge_citation_precision", text, [quote], load_image, max_tokens)
                    jobs.append(Job(qi, "precision", (si, ci), request, parse_precision))
    verdicts = run_jobs(judge, jobs, tally)

    recall: dict[tuple[int, int], float | None] = dict(fixed_recall)
    precision: dict[tuple[int, int, int], float | None] = dict(fixed_precision)
    for job, verdict in zip(jobs, verdicts, strict=True):
        if job.kind == "recall":
            recall[(job.question, *job.slot)] = None if verdict.value is None else RECALL_SCALE[verdict.value]
        else:
            precision[(job.question, *job.slot)] = None if verdict.value is None else float(verdict.value)

    values: list[dict[str, float | None]] = []
    for qi in range(len(records)):
        sentence_recalls: list[float | None] = [recall[(qi, si)] for si, _ in citing[qi]]
        sentence_precisions: list[float | None] = []
        for si, n in citing[qi]:
            per_citation = [precision[(qi, si, ci)] for ci in range(n)]
            clean = [p for p in per_citation if p is not None]
            sentence_precisions.append(sum(clean) / n if len(clean) == n else None)
        complete = all(v is not None for v in sentence_recalls + sentence_precisions)
        if not citing[qi] or not complete:
            values.append({"citation_recall": None, "citation_precision": None, "citation_f1": None})
            continue
        r, p, f = citation_f1(
            [v for v in sentence_recalls if v is not None], [v for v in sentence_precisions if v is not None]
        )
        values.append({"citation_recall": r, "citation_precision": p, "citation_f1": f})
    return FamilyScores(values, tally)


def aggregate_mcitebench(scores: Sequence[QuestionScores], skipped: str | None) -> list[MetricValue]:
    note = judge_note(scores, "mcitebench", skipped)
    note += "; answers with no citing sentence have no value"
    out = [mean_metric(scores, key, note) for key in ("citation_f1", "citation_recall", "citation_precision")]
    source_note = "per answer with gold quotes, averaged; an answer citing nothing scores 0"
    out += [
        mean_metric(scores, key, source_note)
        for key in ("source_f1", "source_precision", "source_recall", "source_exact_match")
    ]
    return out
