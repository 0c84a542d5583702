"""MMLongBench-Doc's own question format (`samples.json`) as a question set.

Each sample becomes one question about its document (`doc_id` is the PDF's file name), asked in
that document's scope: its gold `answer` and `answer_format` (scored by the benchmark's rules,
interleaf/evaluate/mmlongbench.py), `must_include` (the answer, or a List's items) and `answerable`
(false for "Not answerable") for the answer checks every question set gets, and one evidence item
per evidence page with an empty needle (any quote of the page matches) whose `sources` are the
sample's evidence sources (Text, Layout, Table, Chart, Figure: the benchmark's breakdown).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from interleaf.errors import InterleafError
from interleaf.evaluate.mmlongbench import SOURCE_NAMES, Sample, read_samples
from interleaf.questions.stage import QuestionSet, question_set_digest

# evidence source (as source_name gives it) -> the modality of Interleaf's evidence items
_MODALITY = {"Text": "text", "Layout": "layout", "Table": "table", "Chart": "chart", "Figure": "figure"}


def question_id(index: int) -> str:
    """The id of the sample at `index` (0-based), as the dev half's qa_dev.jsonl numbers them."""
    return f"mlb-D-{index + 1:03d}"


def must_include(sample: Sample) -> list[str]:
    """The strings an answer holds when it gives the gold: a List's items, and those of an answer
    of another format written as a list (a Str "['lindqvt@example.edu']"), else the answer."""
    if sample.answer_format == "None":
        return []
    answer = sample.answer.strip()
    if sample.answer_format == "List" or (answer.startswith("[") and answer.endswith("]")):
        try:
            items = ast.literal_eval(answer)
        except (ValueError, SyntaxError):
            items = [answer]
        items = items if isinstance(items, list) else [items]
        return [str(i).strip() for i in items if str(i).strip()]
    return [answer] if answer else []


def question_row(index: int, sample: Sample) -> dict[str, Any]:
    sources = [SOURCE_NAMES.get(s, s) for s in sample.evidence_sources]
    modality = next((_MODALITY[s] for s in sources if s in _MODALITY), "text")
    evidence = [{"page": p, "modality": modality, "needle": "", "sources": sources} for p in sample.evidence_pages]
    kinds = {_MODALITY.get(s, "text").replace("layout", "text") for s in sources}  # as qa_dev.jsonl counts them
    answerable = sample.answer_format != "None"
    question_type = "unanswerable" if not answerable else (kinds.pop() if len(kinds) == 1 else "cross_modal")
    return {
        "question_id": question_id(index),
        "question": " ".join(sample.question.split()),
        "doc_name": sample.doc_id,
        "answer": sample.answer,
        "evidence_json": json.dumps(evidence),
        "question_type": question_type,
        "must_include": must_include(sample),
        "answerable": answerable,
        "cross_page": len(sample.evidence_pages) > 1,
        "answer_format": sample.answer_format,
        "doc_type": sample.doc_type,
    }


def read_mmlongbench(path: str | Path) -> QuestionSet:
    """`samples.json` -> a question set (its id, as every set's, the hash of its rows)."""
    try:
        samples = read_samples(path)
    except (OSError, ValueError) as exc:
        raise InterleafError(f"{path}: cannot read MMLongBench-Doc samples: {exc}") from exc
    rows = [question_row(i, s) for i, s in enumerate(samples)]
    if not rows:
        raise InterleafError(f"{path}: no sample in the file")
    return QuestionSet(question_set_digest(rows), str(path), rows)
