"""Quote selection, as MMDocRAG scores it (§4.1; Appendix A.2 eq. 1; the reference code's eval_all.py).

Two different averages, both as the reference computes them:
- overall F1: per question, P / R / F1 of all cited quotes (text and image together) against all gold
  quotes, then the mean of the per-question F1 over questions. It is NOT the mean of the text and
  image F1 below, whatever §4.1's wording suggests.
- text / image P, R, F1: micro-averaged: every (question, quote) pair of one modality pooled over all
  questions, then one P, R and F1 from the pooled counts.

Edge cases follow the reference's `get_scores`: a ratio with a zero denominator is 0, so a question
with nothing cited has P = R = F1 = 0, and a question without gold quotes also scores 0 (and
still counts in the mean). Both are counted in the metric's note, since for Interleaf "no gold"
usually means the evidence matched no quote of the warehouse rather than a bad answer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from interleaf.evaluate.metrics.records import MODALITIES, MetricValue, QuestionRecord, QuestionScores


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def prf_from_counts(true_positives: int, predicted: int, gold: int) -> PRF:
    """Zero denominators give 0, as the reference does (never undefined, never 1)."""
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision, recall, f1)


def prf(gold: Collection[str], predicted: Collection[str]) -> PRF:
    gold_set, predicted_set = set(gold), set(predicted)
    return prf_from_counts(len(gold_set & predicted_set), len(predicted_set), len(gold_set))


def question_selection(record: QuestionRecord) -> tuple[dict[str, float | None], dict[str, int]]:
    """Per-question values (overall P / R / F1) and the counts the micro averages pool."""
    overall = prf(record.gold.all, record.cited.all)
    values: dict[str, float | None] = {
        "quote_precision": overall.precision,
        "quote_recall": overall.recall,
        "quote_f1": overall.f1,
    }
    counts = {"selection_no_gold": int(not record.gold.all), "selection_nothing_cited": int(not record.cited.all)}
    for modality in MODALITIES:
        gold, cited = set(record.gold.of(modality)), set(record.cited.of(modality))
        counts[f"{modality}_tp"] = len(gold & cited)
        counts[f"{modality}_cited"] = len(cited)
        counts[f"{modality}_gold"] = len(gold)
        # how often an answer cites this modality at all (stock Qwen2.5-VL-7B: images in about a third)
        counts[f"{modality}_answers_citing"] = int(bool(cited))
    return values, counts


def aggregate_selection(scores: Sequence[QuestionScores]) -> list[MetricValue]:
    n = len(scores)
    if not n:
        return [MetricValue("quote_f1", None, 0, "no questions")]
    total = {key: sum(s.counts.get(key, 0) for s in scores) for key in scores[0].counts}
    note = (
        f"per question, averaged; {total['selection_no_gold']} without gold and "
        f"{total['selection_nothing_cited']} citing nothing score 0 (as MMDocRAG's eval_all.py)"
    )
    out = [
        MetricValue("quote_f1", sum(s.values["quote_f1"] or 0.0 for s in scores) / n, n, note),
        MetricValue("quote_precision", sum(s.values["quote_precision"] or 0.0 for s in scores) / n, n, note),
        MetricValue("quote_recall", sum(s.values["quote_recall"] or 0.0 for s in scores) / n, n, note),
    ]
    for modality in MODALITIES:
        pooled = prf_from_counts(total[f"{modality}_tp"], total[f"{modality}_cited"], total[f"{modality}_gold"])
        pooled_note = (
            f"micro-averaged over {n} questions: {total[f'{modality}_tp']} correct of "
            f"{total[f'{modality}_cited']} cited, {total[f'{modality}_gold']} gold"
        )
        out += [
            MetricValue(f"{modality}_quote_precision", pooled.precision, total[f"{modality}_cited"], pooled_note),
            MetricValue(f"{modality}_quote_recall", pooled.recall, total[f"{modality}_gold"], pooled_note),
            MetricValue(f"{modality}_quote_f1", pooled.f1, n, pooled_note),
            MetricValue(
                f"answers_citing_{modality}",
                total[f"{modality}_answers_citing"] / n,
                n,
                f"share of answers with at least one {modality} citation",
            ),
        ]
    return out
