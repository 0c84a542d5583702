"""What the answer metrics read and what they return.

A `QuestionRecord` is one answered question as the evaluate stage can build it from its tables: the
gold quotes, the context the generator saw, the answer and its checked citations. `QuestionScores`
holds every per-question value (plus the counts the micro-averaged metrics need), so a breakdown by
question type is `aggregate([s for s in scores if s.question_type == t])`, with no second judge run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from interleaf.evaluate.metrics.citation_sets import Parsing, cited_labels
from interleaf.generate.protocol import CheckedAnswer, CheckedSentence, Citation, ContextQuote, Modality
from interleaf.generate.sentences import strip_marks

MODALITIES: tuple[Modality, ...] = ("text", "image")


@dataclass(frozen=True)
class MetricValue:
    name: str
    value: float | None  # None: not computed (no judge configured, no data, every reply unparsable)
    n: int  # how many items the value averages over (questions, sentences, numbers: the note says)
    note: str = ""
    group: str = ""  # the slice it was computed on: "" for all, "retriever=bm25 clause=0", ...


@dataclass(frozen=True)
class ByModality:
    """Quote ids split by modality, each tuple unique and in order."""

    text: tuple[str, ...] = ()
    image: tuple[str, ...] = ()

    def of(self, modality: Modality) -> tuple[str, ...]:
        return self.text if modality == "text" else self.image

    @property
    def all(self) -> tuple[str, ...]:
        return self.text + self.image


# A citation of a quote that was not in the context: kept as an id that matches no gold quote, so it
# counts as a false positive, as MMDocRAG's regex over the raw answer counts it (eval_all.py).
def invalid_citation_id(modality: Modality, number: int | str) -> str:
    return f"<not in context: {modality} {number}>"


def cited_from_answer(raw_markdown: str, context: Sequence[ContextQuote], parsing: Parsing = "repaired") -> ByModality:
    """The quotes an answer cites, by modality, in first-citation order, read from the answer as the
    model wrote it (citation_sets.py names the two parsings): citations of numbers outside the
    context are kept (as `invalid_citation_id`), as MMDocRAG's regexes count them. A label matches a
    quote when its digits are the quote's number as written (`text01` matches none, as officially)."""
    by_label = {f"{q.modality}{q.number}": q.quote_id for q in context}
    texts, images = cited_labels(raw_markdown, parsing)

    def ids(labels: tuple[str, ...], modality: Modality) -> tuple[str, ...]:
        found = (by_label.get(label) or invalid_citation_id(modality, label.removeprefix(modality)) for label in labels)
        return tuple(dict.fromkeys(found))

    return ByModality(ids(texts, "text"), ids(images, "image"))


@dataclass(frozen=True)
class QuestionRecord:
    question_id: str
    question: str
    gold: ByModality  # gold quote ids (quotes matching the question's evidence)
    cited: ByModality  # quote ids the answer cites (`cited_from_answer`)
    context: tuple[ContextQuote, ...]  # what the generator saw, in context order (number = position in modality)
    answer_markdown: str  # as shown to the user: citations in canonical form
    short_answer: str = ""  # the gold short answer (qa file `answer`)
    reference_answer: str | None = None  # a gold long answer (MMDocRAG's answer_interleaved); None if none
    checked: CheckedAnswer | None = None  # the citation checker's verdicts; None: sentence metrics not computed
    question_type: str | None = None
    atomic_facts: tuple[str, ...] | None = None  # MAVIS completeness; None: extracted by the judge
    cited_mmdocrag: ByModality | None = None  # cited as eval_all.py reads them; None: not computed
    # correctness.py: the question file's gold (None: the file does not say) and the generator's verdicts
    must_include: tuple[str, ...] | None = None
    answerable: bool | None = None  # gold: False when the right answer is "the documents do not say"
    abstained: bool = False  # the generator said the documents do not say (answers.answerable false)
    addresses_question: bool | None = None  # the generator's relevance verdict; None: not given
    words: int | None = None  # the answer's words as stored (answers.words)

    def context_ids(self, modality: Modality) -> tuple[str, ...]:
        return tuple(q.quote_id for q in self.context if q.modality == modality)

    def quote(self, quote_id: str) -> ContextQuote | None:
        return next((q for q in self.context if q.quote_id == quote_id), None)


@dataclass(frozen=True)
class QuestionScores:
    """Every per-question value; `None` where the metric does not apply or was not computed."""

    question_id: str
    question_type: str | None
    values: dict[str, float | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # summed across questions by `aggregate`
    overlap_pair: tuple[str, str] | None = None  # (answer, reference) for corpus-level BLEU
    judge_failures: tuple[str, ...] = ()  # "family: the reply" for every unparsable or failed judge reply


def strip_citations(markdown: str) -> str:
    """The answer's words without citation markers: `![alt](image2)` becomes its alt text, `[3]` goes
    (numbers inside markers are not numbers the answer states)."""
    return re.sub(r"\s+([.,;:!?])", r"\1", strip_marks(markdown, keep_alt=True))


def statement(sentence: CheckedSentence) -> str:
    """What a sentence states, as a judge reads it: its words without citation markers."""
    return strip_citations(sentence.text).strip()


def answer_sentences(checked: CheckedAnswer) -> list[CheckedSentence]:
    """The sentences that state something: a line that is only a marker (an image with no alt text)
    or only punctuation is not a sentence for the sentence-level metrics."""
    return [s for s in checked.sentences if re.search(r"\w", statement(s))]


def unique_citations(sentence: CheckedSentence) -> list[Citation]:
    seen: dict[tuple[str | None, str, int], Citation] = {}
    for c in sentence.citations:
        seen.setdefault((c.quote_id, c.modality, c.number if c.quote_id is None else 0), c)
    return list(seen.values())


def sum_counts(scores: Sequence[QuestionScores]) -> dict[str, int]:
    total: dict[str, int] = {}
    for s in scores:
        for key, value in s.counts.items():
            total[key] = total.get(key, 0) + value
    return total
