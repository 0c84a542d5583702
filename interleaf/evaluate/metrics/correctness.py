"""Is the answer right, as a reader would check it: qa_dev_answers.jsonl's `must_include` and
`answerable` (see ../shared/corpus/README.md).

- answer_correct: every `must_include` string appears in the answer as a whole value (`holds_whole`), both
  sides folded the same way (`fold`): case, white space, the Unicode minus and dashes written as
  "-", thousands separators ("43,512" = "43512", and the Indian grouping "4,71,306" = "471306"),
  citation markers removed, and with them the space they leave before a stop: a gold sentence ending
  "... before it boils." is in the answer's "... before it boils [5].". A gold value's closing stop
  is the sentence's, not the value's: "... before it boils." is also in "... before it boils, the
  manual says", where an answer quotes it inside a sentence of its own. Whole: not glued to a
  letter, a digit or a decimal part, so a gold "3" is not in "39.4" nor "2" in "2002"
  (MMLongBench-Doc's one-digit counts would otherwise be found in most answers that print any
  number). An abstaining answer is never correct on an answerable question.
- abstention_recall: share of the unanswerable questions the generator abstained on.
- false_abstention: share of the answerable questions it abstained on.
- median_words: the median length of the answers, in words (answers.words).
- answers_addressing_question: share of answers whose generator's answer-level relevance verdict
  (answers.addresses_question) says they address the question.
Questions whose file gives no `must_include` / `answerable` (qa_dev.jsonl, MMDocRAG) have no value
for the first three: "not computed", never 0. `question_correctness` gives the per-question values,
`aggregate_correctness` their aggregates over any subset (overall, by question type).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence

from interleaf.evaluate.metrics.records import MetricValue, QuestionRecord, QuestionScores

_CITATION = re.compile(r"!\[[^\]]*\]\(image\d+\)|\[\d+(?:\s*[,–-]\s*\d+)*\]")
# U+2212 minus, U+2010..U+2015 hyphens and dashes, U+FE63 / U+FF0D small and full-width hyphen-minus
_MINUS_LIKE = re.compile("[\u2212\u2010-\u2015\ufe63\uff0d]")
_GROUPED_NUMBER = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{2,3})+(?![\d,])")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_STOP = re.compile(r"\s+(?=[.,;:!?](?:\s|$))")  # "boils [5]." -> "boils ." -> "boils."
_CLOSING_STOP = re.compile(r"(?<=\w)[.!?]$")  # "... it boils." -> "... it boils"; "U.S." keeps "U.S"


def fold(text: str) -> str:
    """The form both sides are compared in."""
    text = unicodedata.normalize("NFKC", _CITATION.sub(" ", text))
    text = _MINUS_LIKE.sub("-", text)
    text = _GROUPED_NUMBER.sub(lambda m: m.group(0).replace(",", ""), text)
    return _SPACE_BEFORE_STOP.sub("", _SPACES.sub(" ", text.casefold())).strip()


def holds_whole(folded_text: str, item: str) -> bool:
    """Whether `item`, folded, stands in the folded text as a whole value (see the module docstring)."""
    value = _CLOSING_STOP.sub("", fold(item))
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", folded_text) is not None


def answer_correct(answer: str, must_include: list[str], answerable: bool = True) -> bool:
    """All of `must_include` in the answer, each whole (`holds_whole`); False for an abstention."""
    if not answerable:
        return False
    folded = fold(answer)
    return all(holds_whole(folded, item) for item in must_include)


def question_correctness(record: QuestionRecord) -> dict[str, float | None]:
    """Per question: answer_correct (answerable questions with `must_include`), abstained_unanswerable
    and abstained_answerable (where the gold says which), words, addresses_question (1 / 0)."""
    gold = record.answerable
    correct = None
    if gold and record.must_include:
        correct = float(not record.abstained and answer_correct(record.answer_markdown, list(record.must_include)))
    return {
        "answer_correct": correct,
        "abstained_unanswerable": float(record.abstained) if gold is False else None,
        "abstained_answerable": float(record.abstained) if gold is True else None,
        "words": float(record.words) if record.words is not None else None,
        "addresses_question": None if record.addresses_question is None else float(record.addresses_question),
    }


def _mean(scores: Sequence[QuestionScores], key: str) -> tuple[float | None, int]:
    values = [v for s in scores if (v := s.values.get(key)) is not None]
    return (sum(values) / len(values) if values else None), len(values)


def aggregate_correctness(scores: Sequence[QuestionScores]) -> list[MetricValue]:
    correct, n_correct = _mean(scores, "answer_correct")
    recall, n_unanswerable = _mean(scores, "abstained_unanswerable")
    false, n_answerable = _mean(scores, "abstained_answerable")
    relevant, n_verdicts = _mean(scores, "addresses_question")
    words = [v for s in scores if (v := s.values.get("words")) is not None]
    return [
        MetricValue(
            "answer_correct",
            correct,
            n_correct,
            "answerable questions whose answer holds every must_include string whole (folded: case, spaces, "
            "minus signs, thousands separators); an abstention counts as wrong"
            if n_correct
            else "not computed: no answerable question gives must_include",
        ),
        MetricValue(
            "abstention_recall",
            recall,
            n_unanswerable,
            "unanswerable questions (answerable: false) the generator said the documents do not answer"
            if n_unanswerable
            else "not computed: no question is marked answerable: false",
        ),
        MetricValue(
            "false_abstention",
            false,
            n_answerable,
            "answerable questions the generator abstained on (lower is better)"
            if n_answerable
            else "not computed: no question is marked answerable: true",
        ),
        MetricValue(
            "median_words",
            statistics.median(words) if words else None,
            len(words),
            "median answer length in words (a count, not a share)",
        ),
        MetricValue(
            "answers_addressing_question",
            relevant,
            n_verdicts,
            "share of answers the generator's relevance check says address the question (each part "
            "answered or said missing)",
        ),
    ]
