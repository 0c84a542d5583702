"""LLM-as-judge: asking any ChatModel, reading its replies tolerantly, and MMDocRAG's five criteria.

Replies are parsed, never estimated: a reply that cannot be read is counted (and kept, shortened, so
it can be shown) and its question gets no value for that metric. The reference code reads missing
keys as 0 (`.get(key, 0)` in eval_all.py); we do not.

MMDocRAG (Appendix A.2, Figure 24; the reference's prompt_bank/evaluation_answer.txt, adapted in
prompts/judge_mmdocrag.md): fluency, citation quality, text-image coherence, reasoning logic and
factuality, each 0-5, and their mean; each criterion and the mean are averaged over the answers the
judge scored.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from interleaf.evaluate.metrics.records import MetricValue, QuestionRecord, QuestionScores
from interleaf.generate.protocol import ChatModel, ChatRequest, ContextQuote, ImageLoader
from interleaf.prompts import load_prompt

T = TypeVar("T")

MMDOCRAG_CRITERIA = ("fluency", "citation_quality", "text_image_coherence", "reasoning_logic", "factuality")
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
FAILURE_SHOWN_CHARS = 200


@dataclass(frozen=True)
class Verdict(Generic[T]):
    """One judge reply: its parsed value, or why there is none."""

    value: T | None
    reply: str | None  # the reply as received; None when the backend failed
    error: str | None = None  # the backend's error (timeout, HTTP 500, ...)

    @property
    def failed(self) -> bool:
        return self.value is None

    def failure(self, family: str) -> str:
        if self.error is not None:
            return f"{family}: error: {self.error}"
        return f"{family}: unparsable: {(self.reply or '')[:FAILURE_SHOWN_CHARS]!r}"


# -- tolerant reading ----------------------------------------------------------------------------


def _json_objects(text: str) -> list[Any]:
    """Every balanced {...} in the text that parses as JSON (or a Python literal: judges copy the
    prompt's single-quoted example), outermost first, in order."""
    found: list[Any] = []
    depth, start = 0, -1
    for i, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                candidate = text[start : i + 1]
                try:
                    found.append(json.loads(candidate))
                except ValueError:
                    with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
                        found.append(ast.literal_eval(candidate))
    return found


def clean_reply(text: str) -> str:
    """The reply without reasoning blocks and code fences."""
    text = _THINKING.sub("", text)
    return re.sub(r"```[A-Za-z]*", "", text)


def normalize_key(key: object) -> str:
    """'  Citation Quality ' -> 'citation_quality'; 'Text-Image Coherence' -> 'text_image_coherence'."""
    return "_".join(re.findall(r"[a-z0-9]+", str(key).casefold()))


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*\d+\s*)?", value)
        return float(match.group(1)) if match else None
    return None


def parse_scores(text: str, keys: Sequence[str], low: float, high: float) -> dict[str, float] | None:
    """The last JSON object in the reply that gives every key a number in [low, high]; keys are matched
    after `normalize_key` (stray spaces, case, punctuation). None when there is none."""
    for obj in reversed(_json_objects(clean_reply(text))):
        if not isinstance(obj, dict):
            continue
        normalized = {normalize_key(k): _number(v) for k, v in obj.items()}
        scores = {k: normalized.get(k) for k in keys}
        if all(v is not None and low <= v <= high for v in scores.values()):
            return {k: float(v) for k, v in scores.items() if v is not None}
    return None


def parse_rating(text: str, allowed: Sequence[int]) -> int | None:
    """A rating as MCiteBench's judge returns it: {"rating": 2}, a one-key object, or a bare number."""
    cleaned = clean_reply(text)
    for obj in reversed(_json_objects(cleaned)):
        if isinstance(obj, dict):
            values = [v for k, v in obj.items() if "rating" in normalize_key(k) or "score" in normalize_key(k)]
            if not values and len(obj) == 1:
                values = list(obj.values())
            if len(values) == 1:
                number = _number(values[0])
                if number is not None and number.is_integer() and int(number) in allowed:
                    return int(number)
    bare = re.fullmatch(r"\s*(?:rating\s*[:=]\s*)?(\d)\s*\.?\s*", cleaned, re.IGNORECASE)
    if bare and int(bare.group(1)) in allowed:
        return int(bare.group(1))
    return None


def parse_label(text: str, labels: dict[str, float]) -> float | None:
    """A three-level label ("fully support", ...) as the MAVIS / RefLVQA judges answer: read after the
    last "Answer:", else anywhere in the reply if exactly one label occurs. Longest labels first, so
    "not support" is never read as "support"."""
    cleaned = clean_reply(text).casefold()
    marker = cleaned.rfind("answer:")
    ordered = sorted(labels, key=len, reverse=True)
    if marker >= 0:
        tail = cleaned[marker + len("answer:") :]
        hits = sorted((tail.find(label), label) for label in ordered if label in tail)
        if hits:
            return labels[hits[0][1]]
    seen: set[str] = set()
    remaining = cleaned
    for label in ordered:
        if label in remaining:
            seen.add(label)
            remaining = remaining.replace(label, " ")
    return labels[seen.pop()] if len(seen) == 1 else None


# -- batching judge work across questions --------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One judge request on behalf of one question; `slot` says which sentence / citation / fact."""

    question: int  # index into the records
    kind: str
    slot: tuple[int, ...]
    request: ChatRequest
    parse: Callable[[str], Any]


@dataclass
class JudgeTally:
    """Per question: requests sent, replies unparsable, backend failures, and the failures as shown."""

    family: str
    counts: list[dict[str, int]]
    failures: list[list[str]]

    @classmethod
    def empty(cls, family: str, n_questions: int) -> JudgeTally:
        return cls(family, [{} for _ in range(n_questions)], [[] for _ in range(n_questions)])

    def add(self, job: Job, verdict: Verdict[Any]) -> None:
        counts = self.counts[job.question]
        counts[f"{self.family}_requests"] = counts.get(f"{self.family}_requests", 0) + 1
        if verdict.failed:
            key = f"{self.family}_errors" if verdict.error is not None else f"{self.family}_unparsable"
            counts[key] = counts.get(key, 0) + 1
            self.failures[job.question].append(verdict.failure(self.family))


def run_jobs(judge: ChatModel, jobs: Sequence[Job], tally: JudgeTally) -> list[Verdict[Any]]:
    """Every job in one `complete` call; each reply parsed by its job's parser and tallied."""
    if not jobs:
        return []
    results = judge.complete([job.request for job in jobs])
    if len(results) != len(jobs):
        raise ValueError(f"judge {judge.name} returned {len(results)} results for {len(jobs)} requests")
    verdicts: list[Verdict[Any]] = []
    for job, result in zip(jobs, results, strict=True):
        if result.text is None:
            verdict: Verdict[Any] = Verdict(None, None, result.error or "no reply")
        else:
            verdict = Verdict(job.parse(result.text), result.text)
        tally.add(job, verdict)
        verdicts.append(verdict)
    return verdicts


def quote_parts(quotes: Sequence[ContextQuote], load_image: ImageLoader | None) -> tuple[str, tuple[bytes, ...]]:
    """Quotes as the judge reads them: each one's label, kind and text form; with an image loader, the
    image quotes' crops go along too (in the order listed)."""
    lines: list[str] = []
    images: list[bytes] = []
    for quote in quotes:
        shown = ""
        if load_image is not None and quote.modality == "image" and quote.img_path is not None:
            images.append(load_image(quote.img_path))
            shown = f", attached image no. {len(images)}"
        lines.append(f"{quote.label} ({quote.kind}{shown}): {quote.text}")
    return "\n\n".join(lines), tuple(images)


@dataclass
class FamilyScores:
    """A judge family's per-question values, and its tally of requests and failures."""

    values: list[dict[str, float | None]]
    tally: JudgeTally


def judge_note(scores: Sequence[QuestionScores], family: str, skipped: str | None) -> str:
    """ "12 judge replies, 1 unparsable, 0 failed (first, question q3: ...)" for a judge family;
    `skipped` says why the family was not asked ("no judge configured"), None if it was."""
    if skipped is not None:
        return f"not computed: {skipped}"
    requests = sum(s.counts.get(f"{family}_requests", 0) for s in scores)
    unparsable = sum(s.counts.get(f"{family}_unparsable", 0) for s in scores)
    errors = sum(s.counts.get(f"{family}_errors", 0) for s in scores)
    first = next(((s.question_id, f) for s in scores for f in s.judge_failures if f.startswith(family + ":")), None)
    note = f"{requests} judge replies, {unparsable} unparsable, {errors} failed"
    if first:
        note += f" (first, question {first[0]}: {first[1]})"
    return note


def mean_metric(scores: Sequence[QuestionScores], key: str, note: str) -> MetricValue:
    """The mean of a per-question value over the questions that have one."""
    present = [v for s in scores if (v := s.values.get(key)) is not None]
    if not present:
        return MetricValue(key, None, 0, note)
    return MetricValue(key, sum(present) / len(present), len(present), f"mean over {len(present)} questions; {note}")


# -- MMDocRAG's five criteria --------------------------------------------------------------------


def mmdocrag_request(record: QuestionRecord, max_tokens: int | None) -> ChatRequest:
    prompt = load_prompt("judge_mmdocrag")  # MMDocRAG Figure 24 / prompt_bank/evaluation_answer.txt
    user = prompt.render(
        question=record.question,
        short_answer=record.short_answer or "(none)",
        # no long gold answer: the short answer stands in, as the only gold there is
        reference_answer=record.reference_answer or record.short_answer or "(none)",
        answer=record.answer_markdown or " ",
    )
    return ChatRequest(user=user, max_tokens=max_tokens)


def parse_mmdocrag(text: str) -> dict[str, float] | None:
    return parse_scores(text, MMDOCRAG_CRITERIA, 0, 5)


def mmdocrag_values(verdict: Verdict[dict[str, float]] | None) -> dict[str, float | None]:
    scores = verdict.value if verdict is not None else None
    values: dict[str, float | None] = {f"judge_{c}": scores[c] if scores else None for c in MMDOCRAG_CRITERIA}
    values["judge_mean"] = sum(scores.values()) / len(scores) if scores else None
    return values


def judge_mmdocrag(records: Sequence[QuestionRecord], judge: ChatModel, max_tokens: int | None) -> FamilyScores:
    tally = JudgeTally.empty("mmdocrag", len(records))
    jobs = [Job(i, "mmdocrag", (), mmdocrag_request(r, max_tokens), parse_mmdocrag) for i, r in enumerate(records)]
    verdicts = run_jobs(judge, jobs, tally)
    by_question: dict[int, Verdict[Any]] = {job.question: v for job, v in zip(jobs, verdicts, strict=True)}
    return FamilyScores([mmdocrag_values(by_question.get(i)) for i in range(len(records))], tally)


def aggregate_mmdocrag(scores: Sequence[QuestionScores], skipped: str | None) -> list[MetricValue]:
    note = judge_note(scores, "mmdocrag", skipped)
    return [mean_metric(scores, name, note) for name in (*(f"judge_{c}" for c in MMDOCRAG_CRITERIA), "judge_mean")]
