"""One entry for every answer metric: per-question values, then their aggregates.

`score_questions` computes everything once (the judge is asked here, if there is one);
`aggregate` turns any subset of its output into MetricValues without asking again, so breakdowns by
question type, evidence modality, ... are `aggregate(subset)`. `score_answers` does both.
With no judge, every judge metric is reported as None ("not computed"), never estimated.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from interleaf.evaluate.metrics.correctness import aggregate_correctness, question_correctness
from interleaf.evaluate.metrics.grounding import aggregate_grounding, question_grounding
from interleaf.evaluate.metrics.judge import FamilyScores, aggregate_mmdocrag, judge_mmdocrag
from interleaf.evaluate.metrics.mavis import aggregate_mavis, judge_mavis, utilisation_values
from interleaf.evaluate.metrics.mcitebench import aggregate_mcitebench, judge_mcitebench, source_values
from interleaf.evaluate.metrics.overlap import aggregate_overlap, question_overlap
from interleaf.evaluate.metrics.records import MetricValue, QuestionRecord, QuestionScores
from interleaf.evaluate.metrics.selection import aggregate_selection, question_selection
from interleaf.generate.protocol import ChatModel, ImageLoader
from interleaf.prompts import load_prompt

JUDGE_FAMILIES = ("mmdocrag", "mcitebench", "mavis")
JUDGE_PROMPTS = {
    "mmdocrag": ("judge_mmdocrag",),
    "mcitebench": ("judge_citation_recall", "judge_citation_precision"),
    "mavis": ("atomic_facts", "judge_groundedness", "judge_completeness", "judge_relevance"),
}
# Room for a short explanation before "Answer:" (MAVIS) and for a reasoning model's preamble.
DEFAULT_JUDGE_MAX_TOKENS = 512


def judge_prompt_hashes(families: Collection[str] = JUDGE_FAMILIES) -> dict[str, str]:
    """{prompt name: hash} of every prompt the judge families render: for the stage fingerprint and
    the stored results."""
    return {name: load_prompt(name).hash for family in families for name in JUDGE_PROMPTS[family]}


def score_questions(
    records: Sequence[QuestionRecord],
    judge: ChatModel | None = None,
    *,
    load_image: ImageLoader | None = None,
    families: Collection[str] = JUDGE_FAMILIES,
    max_tokens: int | None = DEFAULT_JUDGE_MAX_TOKENS,
) -> list[QuestionScores]:
    """Every per-question value. `load_image` sends image quotes' crops to the judge with their text
    forms (a multimodal judge); `families` picks the judge metric families to ask for."""
    unknown = set(families) - set(JUDGE_FAMILIES)
    if unknown:
        raise ValueError(f"unknown judge families {sorted(unknown)}; known: {JUDGE_FAMILIES}")
    judged: list[FamilyScores] = []
    if judge is not None:
        if "mmdocrag" in families:
            judged.append(judge_mmdocrag(records, judge, max_tokens))
        if "mcitebench" in families:
            judged.append(judge_mcitebench(records, judge, load_image, max_tokens))
        if "mavis" in families:
            judged.append(judge_mavis(records, judge, load_image, max_tokens))

    out: list[QuestionScores] = []
    for qi, record in enumerate(records):
        try:
            selection, selection_counts = question_selection(record)
            overlap, pair = question_overlap(record)
            grounding, grounding_counts = question_grounding(record)
        except Exception as exc:  # a programming error: fail loudly, naming the question
            exc.add_note(f"while scoring question {record.question_id}")
            raise
        values = {**selection, **overlap, **grounding, **source_values(record), **utilisation_values(record)}
        values |= question_correctness(record)
        counts = {**selection_counts, **grounding_counts}
        failures: list[str] = []
        for family in judged:
            values.update(family.values[qi])
            counts.update(family.tally.counts[qi])
            failures += family.tally.failures[qi]
        out.append(QuestionScores(record.question_id, record.question_type, values, counts, pair, tuple(failures)))
    return out


def aggregate(
    scores: Sequence[QuestionScores], judged: bool, families: Collection[str] = JUDGE_FAMILIES, group: str = ""
) -> list[MetricValue]:
    """MetricValues over these questions. `judged`: whether a judge was configured (else the judge
    metrics say "not computed"); `group` labels a breakdown's slice."""

    def skipped(family: str) -> str | None:
        if not judged:
            return "no judge configured"
        return None if family in families else f"judge family {family} not asked for"

    metrics = aggregate_correctness(scores) + aggregate_selection(scores)
    metrics += aggregate_overlap(scores) + aggregate_grounding(scores)
    metrics += aggregate_mmdocrag(scores, skipped("mmdocrag"))
    metrics += aggregate_mcitebench(scores, skipped("mcitebench"))
    metrics += aggregate_mavis(scores, skipped("mavis"))
    if not group:
        return metrics
    return [MetricValue(m.name, m.value, m.n, m.note, group) for m in metrics]


def score_answers(
    records: Sequence[QuestionRecord],
    judge: ChatModel | None = None,
    *,
    load_image: ImageLoader | None = None,
    families: Collection[str] = JUDGE_FAMILIES,
    max_tokens: int | None = DEFAULT_JUDGE_MAX_TOKENS,
) -> list[MetricValue]:
    scores = score_questions(records, judge, load_image=load_image, families=families, max_tokens=max_tokens)
    return aggregate(scores, judge is not None, families)
