"""Quote selection, as MMDocRAG scores it (§4.1; Appendix A.2 eq. 1; the reference code's eval_all.py),
for each way of reading the citations (citation_sets.py): `quote_f1` and its kin from Interleaf's
repaired parsing, `quote_f1_mmdocrag` and its kin from eval_all.py's own (what compares with the
paper's tables), and `citations_parsed_alike`, the share of answers both read the same.

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

from interleaf.evaluate.metrics.records import MODALITIES, ByModality, MetricValue, QuestionRecord, QuestionScores

MMDOCRAG_SUFFIX = "_mmdocrag"  # metrics of citations read as eval_all.py reads them (citation_sets.py)


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
    """Per-question values (overall P / R / F1) and the counts the micro averages pool: for the
    citations as Interleaf reads them (`cited`) and, when the record has them, as MMDocRAG's
    eval_all.py reads them (`cited_mmdocrag`; metrics suffixed `_mmdocrag`)."""
    values, counts = _selection(record.gold, record.cited, "")
    if record.cited_mmdocrag is not None:
        official_values, official_counts = _selection(record.gold, record.cited_mmdocrag, MMDOCRAG_SUFFIX)
        values |= official_values
        counts |= official_counts
        counts["parsings_differ"] = int(set(record.cited.all) != set(record.cited_mmdocrag.all))
    return values, counts


def _selection(
    gold_quotes: ByModality, cited_quotes: ByModality, suffix: str
) -> tuple[dict[str, float | None], dict[str, int]]:
    overall = prf(gold_quotes.all, cited_quotes.all)
    values: dict[str, float | None] = {
        f"quote_precision{suffix}": overall.precision,
        f"quote_recall{suffix}": overall.recall,
        f"quote_f1{suffix}": overall.f1,
    }
    counts = {
        f"selection_no_gold{suffix}": int(not gold_quotes.all),
        f"selection_nothing_cited{suffix}": int(not cited_quotes.all),
    }
    for modality in MODALITIES:
        gold, cited = set(gold_quotes.of(modality)), set(cited_quotes.of(modality))
        counts[f"{modality}_tp{suffix}"] = len(gold & cited)
        counts[f"{modality}_cited{suffix}"] = len(cited)
        counts[f"{modality}_gold{suffix}"] = len(gold)
        # how often an answer cites this modality at all (stock Qwen2.5-VL-7B: images in about a third)
        counts[f"{modality}_answers_citing{suffix}"] = int(bool(cited))
    return values, counts


def aggregate_selection(scores: Sequence[QuestionScores]) -> list[MetricValue]:
    out = _aggregate(scores, "", "Interleaf's parsing: the forms models write instead repaired first")
    official = [s for s in scores if f"quote_f1{MMDOCRAG_SUFFIX}" in s.values]
    if official:
        out += _aggregate(official, MMDOCRAG_SUFFIX, "eval_all.py's parsing: `[i]` and `(imageN)` only")
        differ = sum(s.counts.get("parsings_differ", 0) for s in official)
        out.append(
            MetricValue(
                "citations_parsed_alike",
                1 - differ / len(official),
                len(official),
                f"share of answers whose cited set is the same under both parsings ({differ} differ)",
            )
        )
    return out


def _aggregate(scores: Sequence[QuestionScores], suffix: str, parsing: str) -> list[MetricValue]:
    n = len(scores)
    if not n:
        return [MetricValue(f"quote_f1{suffix}", None, 0, "no questions")]
    total = {key: sum(s.counts.get(key, 0) for s in scores) for key in scores[0].counts}
    note = (
        f"per question, averaged; {total[f'selection_no_gold{suffix}']} without gold and "
        f"{total[f'selection_nothing_cited{suffix}']} citing nothing score 0 (as MMDocRAG's eval_all.py); {parsing}"
    )
    out = [
        MetricValue(f"quote_{m}{suffix}", sum(s.values[f"quote_{m}{suffix}"] or 0.0 for s in scores) / n, n, note)
        for m in ("f1", "precision", "recall")
    ]
    for modality in MODALITIES:
        tp, cited, gold = (total[f"{modality}_{k}{suffix}"] for k in ("tp", "cited", "gold"))
        pooled = prf_from_counts(tp, cited, gold)
        pooled_note = f"micro-averaged over {n} questions: {tp} correct of {cited} cited, {gold} gold; {parsing}"
        out += [
            MetricValue(f"{modality}_quote_precision{suffix}", pooled.precision, cited, pooled_note),
            MetricValue(f"{modality}_quote_recall{suffix}", pooled.recall, gold, pooled_note),
            MetricValue(f"{modality}_quote_f1{suffix}", pooled.f1, n, pooled_note),
        ]
        if not suffix:
            out.append(
                MetricValue(
                    f"answers_citing_{modality}",
                    total[f"{modality}_answers_citing"] / n,
                    n,
                    f"share of answers with at least one {modality} citation",
                )
            )
    return out
