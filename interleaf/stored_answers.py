"""Stored answers read back: the one reader every consumer of generate's outputs uses (the evaluate
stage, the HTML report and `ask`'s views, the MMDocRAG export).

Each `answers` row comes back with its checked citations as the generate stage stored them in
`citations` (quote, label, verdict and reason per citation: the checker is not run again for them),
its relevance verdict as stored in `answers` (addresses_question, relevance_reason; "said missing"
is the stored abstention), and with the context the generator was given, numbered as it saw it.
That context is generate's own `build_requests` over the stored `contexts`, under the generate
configuration the answers were made with (a plan's settings, passed in: nothing reaches into a
stage object). MMDocRAG's fixed contexts come from its file instead (`stored_answers`).

One gap, until generate stores it: the sentence-level verdict (`CheckedSentence.supported`: every
number of the sentence in its cited quotes together, their content words covering it) is not in
`citations`, and cannot be derived from the per-citation rows; it is taken from the checker run on
the stored, already repaired answer (`answer_md`), which gives the same sentences and indexes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from interleaf.generate.citations import check_answer
from interleaf.generate.config import GenerateConfig
from interleaf.generate.protocol import CheckedAnswer, CheckedSentence, Citation, ContextQuote, Verdict
from interleaf.generate.stage import build_requests

NOT_CHECKED = "not checked"  # answers.relevance_reason when the checker was not given the question
# what `read_stored_answers` reads: generate's outputs and the tables its requests were built from
TABLES = ("answers", "citations", "questions", "contexts", "clauses", "quotes", "quote_texts", "documents")


@dataclass(frozen=True)
class StoredAnswer:
    """One stored answer with its context and checked citations."""

    question_id: str
    question: str
    raw_md: str  # as the generator wrote it, reasoning stripped (what citation parsings read)
    answer_md: str  # as shown: citations repaired, invalid ones removed
    context: tuple[ContextQuote, ...]  # what the generator saw, in its order and numbering
    checked: CheckedAnswer
    generator: str
    model: str | None
    seconds: float
    error: str | None
    words: int
    answerable: bool  # False: the generator said the documents do not say
    abstain_reason: str | None
    addresses_question: bool  # the generator's answer-level relevance verdict
    relevance_reason: str
    short_answer: str | None = None  # the value asked for, or "Not answerable" (None: the generator gave none)


def read_stored_answers(tables: Mapping[str, pa.Table], generate: GenerateConfig) -> list[StoredAnswer]:
    """Every stored answer of a question set (`tables`: the `TABLES`, e.g. an evaluate stage's
    inputs), its context rebuilt under `generate`, the configuration the answers were made with."""
    requests = build_requests(
        *(tables[t] for t in ("questions", "contexts", "clauses", "quotes", "quote_texts", "documents")), generate
    )
    return stored_answers(tables["answers"], tables["citations"], {r.question_id: r.quotes for r in requests})


def stored_answers(
    answers: pa.Table, citations: pa.Table, contexts: Mapping[str, tuple[ContextQuote, ...]]
) -> list[StoredAnswer]:
    """The `answers` rows in stored order with their `citations` rows; `contexts`: each question's
    context as the generator saw it. An answer whose context is unknown is an error naming it."""
    by_question: dict[str, list[dict[str, Any]]] = {}
    for row in citations.to_pylist():
        by_question.setdefault(row["question_id"], []).append(row)
    out = []
    for a in answers.to_pylist():
        if a["question_id"] not in contexts:
            raise KeyError(f"stored answer {a['question_id']!r} has no context among the stored contexts")
        context = contexts[a["question_id"]]
        out.append(
            StoredAnswer(
                question_id=a["question_id"],
                question=a["question"],
                raw_md=a["raw_md"],
                answer_md=a["answer_md"],
                context=context,
                checked=checked_answer(a, by_question.get(a["question_id"], []), context),
                generator=a["generator"],
                model=a["model"],
                seconds=a["seconds"],
                error=a["error"],
                words=a["words"],
                answerable=a["answerable"],
                abstain_reason=a["abstain_reason"],
                addresses_question=a["addresses_question"],
                relevance_reason=a["relevance_reason"],
                short_answer=a.get("short_answer"),
            )
        )
    return out


def checked_answer(
    answer: Mapping[str, Any], citations: Sequence[Mapping[str, Any]], context: Sequence[ContextQuote]
) -> CheckedAnswer:
    """An answer's CheckedAnswer from its stored rows: per-citation verdicts from `citations`, in
    stored order; the sentences and their sentence-level verdicts as the module docstring says."""
    by_sentence: dict[int, list[Mapping[str, Any]]] = {}
    for row in citations:
        by_sentence.setdefault(row["sentence_idx"], []).append(row)
    sentences = []
    for sentence in check_answer(answer["answer_md"], context).sentences:
        rows = by_sentence.get(sentence.index, [])
        stored = tuple(
            Citation(r["quote_id"], r["modality"], _number(r["label"]), r["supported"], r["reason"]) for r in rows
        )
        sentences.append(CheckedSentence(sentence.index, sentence.text, stored, sentence.supported if stored else None))
    cited = dict.fromkeys(r["quote_id"] for r in citations)
    relevance = None
    if answer["relevance_reason"] != NOT_CHECKED:
        relevance = Verdict(answer["addresses_question"], not answer["answerable"], answer["relevance_reason"])
    return CheckedAnswer(
        answer["answer_md"],
        tuple(sentences),
        answer["invalid_citations"],
        answer["repaired_citations"],
        tuple(cited),
        relevance,
    )


def _number(label: str) -> int:
    """`[3]` -> 3, `image2` -> 2 (ContextQuote.label's two forms)."""
    return int(label.strip("[]").removeprefix("image"))
