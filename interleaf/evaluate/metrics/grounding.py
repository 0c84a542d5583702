"""Offline grounding figures, no judge needed: the citation checker's verdicts aggregated, and how
many of the gold short answer's numbers the answer states.

- sentences_cited: share of answer sentences that cite at least one quote (micro, over sentences).
- sentences_supported: share of citing sentences the checker found supported by what they cite
  (`CheckedSentence.supported`; micro, over citing sentences).
- numbers_grounded: share of the numbers the answer's sentences state that appear in a quote the
  same sentence cites (the checker's own test: `numbers_in` over `quote_support_text`); a number in
  a sentence citing nothing is not grounded. Micro, over numbers.
- short_answer_number_recall: per question, the share of the numbers in the gold short answer that
  the answer states anywhere; averaged over the questions whose short answer has numbers.
Numbers are read by `interleaf.generate.sentences.numbers_in` (normalised: "1,234" = "1234",
"53.70" = "53.7"; citation markers are not numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

from interleaf.evaluate.metrics.records import (
    MetricValue,
    QuestionRecord,
    QuestionScores,
    answer_sentences,
    strip_citations,
    sum_counts,
)
from interleaf.generate.citations import quote_support_text
from interleaf.generate.sentences import numbers_in


def short_answer_number_recall(short_answer: str, answer_markdown: str) -> float | None:
    """Share of the short answer's numbers found among the answer's; None when it has none."""
    gold = numbers_in(short_answer)
    if not gold:
        return None
    stated = set(numbers_in(strip_citations(answer_markdown)))
    return sum(n in stated for n in gold) / len(gold)


def grounding_counts(record: QuestionRecord) -> dict[str, int]:
    """Sentence and number counts from the checker's verdicts (empty when the answer was not checked)."""
    if record.checked is None:
        return {}
    counts = {"sentences": 0, "sentences_citing": 0, "sentences_supported": 0, "numbers": 0, "numbers_grounded": 0}
    quote_numbers = {q.quote_id: set(numbers_in(quote_support_text(q))) for q in record.context}
    for sentence in answer_sentences(record.checked):
        counts["sentences"] += 1
        cited = {c.quote_id for c in sentence.citations if c.quote_id in quote_numbers}
        if sentence.citations:
            counts["sentences_citing"] += 1
            counts["sentences_supported"] += int(bool(sentence.supported))
        available = set().union(*(quote_numbers[q] for q in cited if q is not None))
        stated = numbers_in(strip_citations(sentence.text))
        counts["numbers"] += len(stated)
        counts["numbers_grounded"] += sum(n in available for n in stated)
    return counts


def question_grounding(record: QuestionRecord) -> tuple[dict[str, float | None], dict[str, int]]:
    counts = grounding_counts(record)
    values: dict[str, float | None] = {
        "short_answer_number_recall": short_answer_number_recall(record.short_answer, record.answer_markdown),
        "sentences_supported": (
            counts["sentences_supported"] / counts["sentences_citing"] if counts.get("sentences_citing") else None
        ),
        "numbers_grounded": counts["numbers_grounded"] / counts["numbers"] if counts.get("numbers") else None,
    }
    return values, counts


def aggregate_grounding(scores: Sequence[QuestionScores]) -> list[MetricValue]:
    total = sum_counts(scores)
    checked = sum(1 for s in scores if "sentences" in s.counts)
    sentences, citing, numbers = total.get("sentences", 0), total.get("sentences_citing", 0), total.get("numbers", 0)
    recalls = [v for s in scores if (v := s.values.get("short_answer_number_recall")) is not None]
    where = f"over {checked} checked answers"
    return [
        MetricValue(
            "sentences_cited",
            citing / sentences if sentences else None,
            sentences,
            f"share of sentences citing a quote, {where}",
        ),
        MetricValue(
            "sentences_supported",
            total.get("sentences_supported", 0) / citing if citing else None,
            citing,
            f"share of citing sentences the citation checker found supported, {where}",
        ),
        MetricValue(
            "numbers_grounded",
            total.get("numbers_grounded", 0) / numbers if numbers else None,
            numbers,
            f"share of stated numbers found in a quote their sentence cites, {where}",
        ),
        MetricValue(
            "short_answer_number_recall",
            sum(recalls) / len(recalls) if recalls else None,
            len(recalls),
            "per question, share of the short answer's numbers the answer states; "
            "averaged over questions whose short answer has numbers",
        ),
    ]
