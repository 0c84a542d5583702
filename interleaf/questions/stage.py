"""The question set as a stage: what the answer flow's later stages read their questions from.

A question set is named by the hash of its content, so the same file asked twice is the same
unit (nothing is recomputed), and an edited file is a new one. Question files are JSON Lines in
qa_dev.jsonl's format: `id`, `question`, and optionally `doc`, `answer`, `evidence`,
`question_type`, and qa_dev_answers.jsonl's `must_include`, `answerable`, `cross_page` (the gold
the answers are judged by; `doc: null` asks over the whole corpus), and MMLongBench-Doc's
`answer_format` and `doc_type` (the benchmark's scoring rules apply where a question has a format);
a line that cannot be read, or whose fields have the wrong type, is a reject naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from interleaf.errors import InterleafError
from interleaf.stage import StageInput, StageOutput
from warehouse import schemas

STAGE = "questions"


@dataclass(frozen=True)
class QuestionSet:
    qset_id: str
    source: str  # the file, or "ask"
    rows: list[dict[str, Any]]  # QUESTIONS rows without qset_id / source
    rejects: list[tuple[str | None, str]] = field(default_factory=list)


def question_set_digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def read_question_file(path: str | Path) -> QuestionSet:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InterleafError(f"{path}: cannot read the question file: {exc}") from exc
    rows, rejects, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            question_id, question = str(raw["id"]), str(raw["question"]).strip()
        except (ValueError, KeyError, TypeError) as exc:
            rejects.append((None, f"{path.name} line {number}: not a question record ({type(exc).__name__}: {exc})"))
            continue
        if not question or question_id in seen:
            rejects.append((question_id, f"{path.name} line {number}: empty or repeated question id"))
            continue
        try:
            gold = answer_gold(raw)
        except ValueError as exc:
            rejects.append((question_id, f"{path.name} line {number}: {exc}"))
            continue
        seen.add(question_id)
        evidence = raw.get("evidence")
        rows.append(
            {
                "question_id": question_id,
                "question": question,
                "doc_name": raw.get("doc"),
                "answer": raw.get("answer"),
                "evidence_json": json.dumps(evidence) if evidence is not None else None,
                "question_type": raw.get("question_type"),
            }
            | gold
        )
    if not rows:
        raise InterleafError(f"{path}: no question could be read ({len(rejects)} lines rejected)")
    return QuestionSet(question_set_digest(rows), str(path), rows, rejects)


NO_GOLD: dict[str, Any] = {
    "must_include": None,
    "answerable": None,
    "cross_page": None,
    "answer_format": None,
    "doc_type": None,
}
# MMLongBench-Doc's answer formats (interleaf/evaluate/mmlongbench.py scores a short answer by them)
ANSWER_FORMATS = ("Int", "Float", "Str", "List", "None")


def answer_gold(raw: dict[str, Any]) -> dict[str, Any]:
    """qa_dev_answers.jsonl's fields for judging an answer, checked: `must_include` a list of
    strings, `answerable` and `cross_page` true or false; each may be absent (null)."""
    must_include = raw.get("must_include")
    if must_include is not None and (
        not isinstance(must_include, list) or not all(isinstance(m, str) and m.strip() for m in must_include)
    ):
        raise ValueError("`must_include` must be a list of non-empty strings")
    out = {"must_include": must_include}
    for key in ("answerable", "cross_page"):
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"`{key}` must be true or false, not {value!r}")
        out[key] = value
    if out["answerable"] is False and must_include:
        raise ValueError("an unanswerable question (`answerable`: false) has nothing it must include")
    answer_format = raw.get("answer_format")
    if answer_format is not None and answer_format not in ANSWER_FORMATS:
        raise ValueError(f"`answer_format` must be one of {', '.join(ANSWER_FORMATS)}, not {answer_format!r}")
    doc_type = raw.get("doc_type")
    if doc_type is not None and not isinstance(doc_type, str):
        raise ValueError(f"`doc_type` must be a string, not {doc_type!r}")
    return out | {"answer_format": answer_format, "doc_type": doc_type}


def single_question(question: str, doc_names: list[str] | None = None, context: str | None = None) -> QuestionSet:
    """One question (`ask`, the server), about the documents named (resolved by interleaf/scope.py);
    `context`: the earlier turns of a chat, which query expansion adds as one more clause."""
    names = list(doc_names or [])
    row = {"question_id": "q1", "question": question.strip(), "doc_name": names[0] if len(names) == 1 else None}
    if context:
        row["context"] = context
    row["doc_names"] = names
    row |= {"answer": None, "evidence_json": None, "question_type": None} | NO_GOLD
    return QuestionSet(question_set_digest(row), "ask", [row])


class QuestionsStage:
    """A question set (its file) -> the `questions` table."""

    name = STAGE
    unit = "question_set"
    page_work = False
    inputs: tuple[str, ...] = ()
    outputs = ("questions",)
    upstream: tuple[str, ...] = ()
    sources = ("interleaf.questions",)
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def config(self) -> dict[str, Any]:
        return {}

    def prompt_hashes(self) -> list[str]:
        return []

    def version(self) -> dict[str, str]:
        return {}

    def run(self, given: StageInput) -> StageOutput:
        qset: QuestionSet = given.source
        rows = [r | {"qset_id": qset.qset_id, "source": qset.source} for r in qset.rows]
        table = pa.Table.from_pylist(rows, schema=schemas.QUESTIONS)
        return StageOutput({"questions": table}, rejects=qset.rejects, counts={"questions": len(rows)})
