"""MMLongBench-Doc's scoring, as our own code: Ma et al., "MMLongBench-Doc: Benchmarking Long-context Document
Understanding with Visualizations" (NeurIPS 2024 Datasets and Benchmarks): its evaluation protocol, answer extraction
by a judge model and then rule-based scoring with generalized accuracy and F1.

The rules are those of the benchmark's released scorer (`eval/eval_score.py` and `eval/extract_answer.py`,
mayubo2333/MMLongBench-Doc at d73f0dc; a copy sits in shared/benchmarks/mmlongbench-dev). A judge model first
extracts a short answer from the long one (`extraction_messages`, `parse_extraction`); `score` then compares it
with the gold under the gold's `answer_format`:

- Int: int(gold) == int(float(pred)) (a pred "12.7" counts as 12); a gold that is not an integer scores 0.
- Float: both cleaned (`_clean`), pred equal to gold/100, gold or gold*100 within rel_tol 0.01, or equal once both
  are rounded to max(min(decimals), 2) places, decimals counted on str(float) as the released scorer does.
- Str and None ("Not answerable"): cleaned, lower-cased; exact equality for URLs, code files, "page ..", numbers,
  times, dates and e-mail addresses, otherwise ANLS with threshold 0.5.
- List: a Python-literal "[...]" is read with ast.literal_eval (the released scorer calls eval); lengths differ -> 0;
  else the cleaned elements are sorted and, when the first gold element is a number or an exact-match string, the
  "-"-joined lists must be equal, otherwise the lowest ANLS of the element pairs.

Where the released scorer raises (a Float gold that is not a number, a List pred that is not a literal, two empty
lists), we give a score instead: 0.0, the pred as a one-element list, and 1.0. An unknown format raises ValueError.
`accuracy_and_f1` and `breakdown` follow its `eval_acc_and_f1` and `show_results`.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

NOT_ANSWERABLE = "Not answerable"
FAIL_TO_ANSWER = "Fail to answer"  # the extraction prompt's word for a reply that read nothing
ANSWER_FORMATS = ("Int", "Float", "Str", "List", "None")
# The paper's tables name the evidence sources shorter than samples.json does.
SOURCE_NAMES = {
    "Pure-text (Plain-text)": "Text",
    "Generalized-text (Layout)": "Layout",
    "Table": "Table",
    "Chart": "Chart",
    "Figure": "Figure",
}
ANLS_THRESHOLD = 0.5

_PARENTHESES = re.compile(r"\s*\([^)]*\)")
_END_QUOTE = re.compile(r"^['\"]|['\"]$")
_NUMBER_PAIR = re.compile(r"\b\d+(-\d+|\s\d+)?\b")  # the released scorer's "telephone number": 18, 1-800, 10 45
_YEAR_MONTH_DAY = re.compile(r"\b\d{4}[-\s]\d{2}[-\s]\d{2}\b")
_YEAR_MONTH = re.compile(r"\b\d{4}[-\s]\d{2}\b")
_EMAIL = re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}")
_FENCE = re.compile(r"```[a-zA-Z]*")
_EXTRACTED = re.compile(r"extracted\s+answer\s*:", re.IGNORECASE)
_FORMAT = re.compile(r"answer\s+format\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class Sample:
    """One question of the benchmark's samples.json; evidence pages are 1-based."""

    doc_id: str
    doc_type: str
    question: str
    answer: str
    answer_format: str
    evidence_pages: tuple[int, ...]
    evidence_sources: tuple[str, ...]

    @property
    def answerable(self) -> bool:
        # The released scorer tells unanswerable questions by the gold string, not by the format.
        return self.answer != NOT_ANSWERABLE


def read_samples(path: str | Path) -> list[Sample]:
    """The benchmark's samples.json (a JSON list; evidence fields are Python-literal strings such as "[2]")."""
    path = Path(path)
    rows = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(rows, list):
        raise ValueError(f"{path}: expected a JSON list of samples, got {type(rows).__name__}")
    samples = []
    for index, row in enumerate(rows):
        try:
            samples.append(_sample(row))
        except (KeyError, TypeError, ValueError, SyntaxError) as error:
            raise ValueError(f"{path}: sample {index}: {error}") from error
    return samples


def _sample(row: dict[str, object]) -> Sample:
    texts = [row[key] for key in ("doc_id", "doc_type", "question", "answer", "answer_format")]
    if not all(isinstance(value, str) for value in texts):
        raise ValueError(f"doc_id, doc_type, question, answer and answer_format must be strings: {texts!r}")
    doc_id, doc_type, question, answer, answer_format = (str(value) for value in texts)
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer_format {answer_format!r} is not one of {ANSWER_FORMATS}")
    pages = _literal_list(row["evidence_pages"], "evidence_pages")
    sources = _literal_list(row["evidence_sources"], "evidence_sources")
    # >= 0, not >= 1: two dev samples (indices 38, 256) give page 0 although the benchmark's pages are 1-based.
    if not all(isinstance(page, int) and not isinstance(page, bool) and page >= 0 for page in pages):
        raise ValueError(f"evidence_pages {pages!r} are not page numbers")
    if not all(isinstance(source, str) for source in sources):
        raise ValueError(f"evidence_sources {sources!r} are not strings")
    return Sample(doc_id, doc_type, question, answer, answer_format, tuple(pages), tuple(sources))  # type: ignore[arg-type]


def _literal_list(value: object, key: str) -> list[object]:
    parsed = ast.literal_eval(value) if isinstance(value, str) else value
    if not isinstance(parsed, list):
        raise ValueError(f"{key} {value!r} is not a list")
    return parsed


def score(gold: str, pred: str | list[object], answer_format: str) -> float:
    """The benchmark's score of one extracted answer against the gold, 0.0 to 1.0 (see the module docstring)."""
    if answer_format == "Int":
        return _score_int(gold, pred)
    if answer_format == "Float":
        return _score_float(gold, pred)
    if answer_format in ("Str", "None"):
        gold_clean, pred_clean = _clean(gold), _clean(pred)
        return float(gold_clean == pred_clean) if _exact_match(gold_clean) else _anls(gold_clean, pred_clean)
    if answer_format == "List":
        return _score_list(gold, pred)
    raise ValueError(f"unknown answer_format {answer_format!r}: expected one of {ANSWER_FORMATS}")


def _score_int(gold: str, pred: str | list[object]) -> float:
    if not isinstance(pred, str):  # float() of a list fails in the released scorer too
        return 0.0
    try:
        expected = int(gold)
        # int(float(..)) as released: "12.0" and "12.7" both read as 12; inf and nan do not read.
        got = int(float(pred))
    except (ValueError, TypeError, OverflowError):
        return 0.0
    return float(expected == got)


def _score_float(gold: str, pred: str | list[object]) -> float:
    try:
        expected = float(_clean(gold))
        got = float(_clean(pred))
    except ValueError:
        return 0.0
    # A percentage may come back as 12.5, 0.125 or 1250: each reading of the gold is tried.
    for candidate in (expected / 100, expected, expected * 100):
        if math.isclose(candidate, got, rel_tol=0.01):
            return 1.0
        places = max(min(_decimals(got), _decimals(candidate)), 2)
        if round(got, places) == round(candidate, places):
            return 1.0
    return 0.0


def _decimals(value: float) -> int:
    # Counted on str(float) as released: "12.0" -> 1, "1.5e-05" -> 5 ("5e-05"), no "." at all -> 3.
    text = str(value)
    return len(text.split(".")[-1]) if "." in text else 3


def _score_list(gold: str, pred: str | list[object]) -> float:
    golds, preds = _as_list(gold), _as_list(pred)
    if len(golds) != len(preds):
        return 0.0
    if not golds:
        return 1.0
    gold_clean = sorted(_clean(item) for item in golds)
    pred_clean = sorted(_clean(item) for item in preds)
    # The first gold element (after sorting) decides how the whole list compares, as released.
    if _is_float(gold_clean[0]) or _exact_match(gold_clean[0]):
        return float("-".join(gold_clean) == "-".join(pred_clean))
    return min(_anls(g, p) for g, p in zip(gold_clean, pred_clean, strict=True))


def _as_list(value: str | list[object]) -> list[object]:
    if isinstance(value, list):
        return value
    if value.startswith("["):  # only a leading "[" (no strip) marks a list, as released
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return [value]
        return parsed if isinstance(parsed, list) else [parsed]
    return [value]


def _clean(value: object) -> str:
    """The released get_clean_string. Its lines meant to drop a trailing "mile(s)"/"million" discard their
    result, so units stay: "12 miles" does not match "12"."""
    text = str(value).lower().strip()
    text = _PARENTHESES.sub("", text).strip()
    text = _END_QUOTE.sub("", text).strip()
    return text.lstrip("$").strip().rstrip("%").strip()


def _exact_match(text: str) -> bool:
    """Cleaned golds that ANLS would wrongly half-credit: a near miss on a date or a phone number is wrong."""
    return (
        "https://" in text
        or text.endswith((".py", "ipynb"))
        or text.startswith("page")
        or "a.m." in text
        or "p.m." in text
        or any(p.fullmatch(text) for p in (_NUMBER_PAIR, _YEAR_MONTH_DAY, _YEAR_MONTH, _EMAIL))
    )


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _levenshtein(a: str, b: str) -> int:
    if len(a) > len(b):
        a, b = b, a
    previous = list(range(len(a) + 1))
    for j, char_b in enumerate(b, start=1):
        current = [j]
        for i, char_a in enumerate(a, start=1):
            current.append(min(previous[i] + 1, current[i - 1] + 1, previous[i - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def _anls(gold: str, pred: str) -> float:
    # The released scorer divides by the longer length after .upper() ("ß" counts as 2): kept for equal scores.
    length = max(len(gold.upper()), len(pred.upper()))
    similarity = 1.0 - (_levenshtein(gold, pred) / length if length else 0.0)
    return similarity if similarity > ANLS_THRESHOLD else 0.0


def accuracy_and_f1(scored: Sequence[tuple[Sample, str, float]]) -> tuple[float, float]:
    """(accuracy, F1) over (sample, extracted pred, score) as the released eval_acc_and_f1: accuracy is the mean
    score; recall the mean over answerable golds; precision their score sum over the preds that are not exactly
    "Not answerable"; F1 0.0 when either side is empty or both are 0. (0.0, 0.0) for no samples."""
    if not scored:
        return 0.0, 0.0
    accuracy = sum(s for _, _, s in scored) / len(scored)
    answerable = [s for sample, _, s in scored if sample.answerable]
    answered = sum(1 for _, pred, _ in scored if pred != NOT_ANSWERABLE)
    if not answerable or not answered:
        return accuracy, 0.0
    recall, precision = sum(answerable) / len(answerable), sum(answerable) / answered
    f1 = 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0
    return accuracy, f1


@dataclass(frozen=True)
class GroupAccuracy:
    accuracy: float | None  # None for an empty group: not computed, never 0
    n: int


@dataclass(frozen=True)
class Breakdown:
    overall: GroupAccuracy
    f1: float
    by_pages: dict[str, GroupAccuracy]  # "Single-page", "Cross-page", "Unanswerable", as show_results groups them
    by_source: dict[str, GroupAccuracy]  # a question counts once in each of its (renamed) sources
    by_format: dict[str, GroupAccuracy]
    by_doc_type: dict[str, GroupAccuracy]


def _group(scores: Sequence[float]) -> GroupAccuracy:
    return GroupAccuracy(sum(scores) / len(scores) if scores else None, len(scores))


def breakdown(scored: Sequence[tuple[Sample, str, float]]) -> Breakdown:
    """Accuracy overall and by group as the released show_results. Single-page is any question with exactly one
    evidence page (in the dev half, two unanswerable ones count there too); Cross-page is an answerable question
    with any other number of pages (one dev question has none); Unanswerable goes by the gold string."""
    pages: dict[str, list[float]] = {"Single-page": [], "Cross-page": [], "Unanswerable": []}
    sources: defaultdict[str, list[float]] = defaultdict(list)
    formats: defaultdict[str, list[float]] = defaultdict(list)
    doc_types: defaultdict[str, list[float]] = defaultdict(list)
    for sample, _, value in scored:
        if len(sample.evidence_pages) == 1:
            pages["Single-page"].append(value)
        elif sample.answerable:
            pages["Cross-page"].append(value)
        if not sample.answerable:
            pages["Unanswerable"].append(value)
        for source in sample.evidence_sources:
            sources[SOURCE_NAMES.get(source, source)].append(value)
        formats[sample.answer_format].append(value)
        doc_types[sample.doc_type].append(value)
    return Breakdown(
        overall=_group([value for _, _, value in scored]),
        f1=accuracy_and_f1(scored)[1],
        by_pages={name: _group(values) for name, values in pages.items()},
        by_source={name: _group(values) for name, values in sources.items()},
        by_format={name: _group(values) for name, values in formats.items()},
        by_doc_type={name: _group(values) for name, values in doc_types.items()},
    )


def extraction_messages(
    prompt_text: str, question: str, analysis: str, *, single_turn: bool = False
) -> list[dict[str, str]]:
    """The judge's chat as released extract_answer sends it: the prompt as the user turn, then question and
    analysis as an assistant turn. single_turn puts both in one user turn, for servers that refuse a chat that
    ends on the assistant."""
    tail = f"\n\nQuestion:{question}\nAnalysis:{analysis}\n"
    if single_turn:
        return [{"role": "user", "content": prompt_text + tail}]
    return [{"role": "user", "content": prompt_text}, {"role": "assistant", "content": tail}]


def parse_extraction(text: str) -> tuple[str, str]:
    """(extracted answer, answer format) from the judge's reply "Extracted answer: ..\\nAnswer format: ..".
    Case, code fences and markdown bold are tolerated; the answer runs to "Answer format:" as released.
    Without an "Extracted answer:" the reply reads as ("Fail to answer", "String")."""
    text = _FENCE.sub("", text).replace("**", "")
    start = _EXTRACTED.search(text)
    if start is None:
        return FAIL_TO_ANSWER, "String"
    rest = text[start.end() :]
    end = _FORMAT.search(rest)
    answer = (rest[: end.start()] if end else rest).strip()
    after = rest[end.end() :].strip() if end else ""
    answer_format = after.splitlines()[0].strip() if after else ""
    return (answer or FAIL_TO_ANSWER), (answer_format or "String")


def page_recall(
    contexts: Sequence[Sequence[int]], evidence_pages: Sequence[Sequence[int]], ks: Sequence[int] = (1, 5, 10, 20)
) -> tuple[dict[int, float | None], int]:
    """Share of questions with an evidence page among the pages of their first k retrieved quotes, for each k.
    contexts[i] lists the 0-based page_idx of question i's quotes in rank order; evidence_pages[i] its 1-based
    gold pages. Questions without evidence pages (unanswerable) are left out; a gold page 0 (two dev samples) can
    never be hit. Returns ({k: share}, number of questions counted)."""
    if len(contexts) != len(evidence_pages):
        raise ValueError(f"{len(contexts)} contexts for {len(evidence_pages)} questions")
    hits = dict.fromkeys(ks, 0)
    counted = 0
    for quotes, gold in zip(contexts, evidence_pages, strict=True):
        if not gold:
            continue
        counted += 1
        wanted = {page - 1 for page in gold}
        for k in ks:
            hits[k] += any(page in wanted for page in quotes[:k])
    return {k: (hits[k] / counted if counted else None) for k in ks}, counted
