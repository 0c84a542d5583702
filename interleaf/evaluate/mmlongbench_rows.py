"""MMLongBench-Doc's figures as `eval_metrics` rows, for a question set that carries its gold
(`answer_format`: interleaf/questions/mmlongbench.py, or the dev half's qa_dev.jsonl).

The short answer scored is the generator's own (`answers.short_answer`). A model answer without one
is read by the benchmark's extraction prompt (prompts/mmlongbench_extraction.md, as the paper's
GPT-4o step) when a judge is configured; without a judge it scores as "Fail to answer". An
abstention is "Not answerable". Rows:

- `mmlb_accuracy` (the paper's Acc) overall and by evidence source (a question counts in each of its
  sources), answer format, document type and page span (single-page, cross-page, unanswerable);
- `mmlb_f1` (the paper's F1: recall over answerable golds, precision over non-"Not answerable" preds);
- `page_recall@k` (k = 1, 5, 10, 20): the share of the questions with evidence pages that have a quote
  of one of them among their first k retrieved quotes (of their document).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from interleaf.evaluate import mmlongbench as mlb
from interleaf.generate.protocol import ChatModel, ChatRequest
from interleaf.prompts import load_prompt
from interleaf.stored_answers import StoredAnswer

PAGE_RECALL_KS = (1, 5, 10, 20)
EXTRACTION_PROMPT = "mmlongbench_extraction"
_LEAD = re.compile(r"^\s*(?:extracted\s+answer\s*:)?\s*", re.I)


def sample_of(question: Mapping[str, Any]) -> mlb.Sample:
    evidence = json.loads(question["evidence_json"]) if question["evidence_json"] else []
    sources = next((tuple(e.get("sources", ())) for e in evidence if e.get("sources")), ())
    if not sources:  # a qa_dev.jsonl line: its evidence items' modalities
        sources = tuple(dict.fromkeys(e.get("modality", "text").title() for e in evidence))
    return mlb.Sample(
        doc_id=question["doc_name"] or "",
        doc_type=question["doc_type"] or "",
        question=question["question"],
        answer=question["answer"] or mlb.NOT_ANSWERABLE,
        answer_format=question["answer_format"],
        evidence_pages=tuple(sorted({int(e["page"]) for e in evidence})),
        evidence_sources=sources,
    )


def predictions(
    answers: Sequence[StoredAnswer],
    questions: Mapping[str, Mapping[str, Any]],
    judge: ChatModel | None,
    max_tokens: int,
) -> dict[str, str]:
    """question_id -> the short answer scored (see the module docstring)."""
    out: dict[str, str] = {}
    todo: list[StoredAnswer] = []
    for a in answers:
        if not a.answerable:
            out[a.question_id] = mlb.NOT_ANSWERABLE
        elif a.short_answer:
            out[a.question_id] = a.short_answer
        elif judge is not None:
            todo.append(a)
        else:
            out[a.question_id] = mlb.FAIL_TO_ANSWER
    if todo and judge is not None:
        prompt = load_prompt(EXTRACTION_PROMPT).render()
        requests = [
            ChatRequest(
                mlb.extraction_messages(prompt, questions[a.question_id]["question"], a.answer_md, single_turn=True)[0][
                    "content"
                ],
                max_tokens=max_tokens,
            )
            for a in todo
        ]
        for a, result in zip(todo, judge.complete(requests), strict=True):
            out[a.question_id] = mlb.parse_extraction(result.text or "")[0] if result.text else mlb.FAIL_TO_ANSWER
    return out


def mmlongbench_rows(
    questions: Sequence[Mapping[str, Any]],
    answers: Sequence[StoredAnswer],
    context_pages: Mapping[str, Sequence[tuple[str, int]]],
    doc_ids: Mapping[str, str],
    judge: ChatModel | None = None,
    max_tokens: int = 256,
) -> list[dict[str, Any]]:
    """The rows for the questions with an `answer_format`; `context_pages`: question_id -> the
    (doc_id, page_idx) of its ranked context quotes at the largest budget."""
    gold = {q["question_id"]: q for q in questions if q.get("answer_format")}
    if not gold:
        return []
    answered = [a for a in answers if a.question_id in gold]
    preds = predictions(answered, gold, judge, max_tokens)
    scored = []
    for a in answered:
        sample = sample_of(gold[a.question_id])
        pred = preds[a.question_id]
        scored.append((sample, pred, mlb.score(sample.answer, pred, sample.answer_format)))
    rows: list[dict[str, Any]] = []
    if scored:
        b = mlb.breakdown(scored)
        note = "MMLongBench-Doc's score of the short answer (accuracy: its mean)"
        rows.append(_row("mmlb_accuracy", "all", "all", b.overall.accuracy, b.overall.n, note))
        rows.append(
            _row("mmlb_f1", "all", "all", b.f1, b.overall.n, "MMLongBench-Doc's F1 (answerable recall, precision)")
        )
        for breakdown, groups in (
            ("evidence_source", b.by_source),
            ("answer_format", b.by_format),
            ("doc_type", b.by_doc_type),
            ("page_span", b.by_pages),
        ):
            for name, g in sorted(groups.items()):
                rows.append(_row("mmlb_accuracy", breakdown, name, g.accuracy, g.n, note))
    ranked, pages = [], []
    for qid, q in gold.items():
        sample = sample_of(q)
        doc = doc_ids.get(sample.doc_id)
        ranked.append([p for d, p in context_pages.get(qid, ()) if doc is None or d == doc])
        pages.append(sample.evidence_pages)
    recall, counted = mlb.page_recall(ranked, pages, PAGE_RECALL_KS)
    for k, value in recall.items():
        note = "questions with a quote of an evidence page among the first k retrieved"
        rows.append(_row(f"page_recall@{k}", "all", "all", value, counted, note))
    return rows


def _row(metric: str, breakdown: str, group: str, value: float | None, n: int, note: str) -> dict[str, Any]:
    return {"metric": metric, "breakdown": breakdown, "group_name": group, "value": value, "n": n, "note": note}


# -- the table `interleaf eval --mmlongbench` prints -----------------------------------------------------

_SOURCES = ("Text", "Layout", "Table", "Chart", "Figure")
_SPANS = ("Single-page", "Cross-page", "Unanswerable")
_ANSWER_CHECKS = (
    ("answer_correct", "answerable right, gold value in the answer"),
    ("false_abstention", "answerable, abstained"),
    ("abstention_recall", "unanswerable, abstained"),
    ("median_words", "answer words (median)"),
)


def render_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Plain text in the paper's layout (Table 3: Acc, F1, evidence sources, page spans), then the
    answer formats, document types, page recall and the answer checks of every question set."""
    at = {(r["metric"], r["breakdown"], r["group_name"]): r for r in rows}

    def cell(metric: str, breakdown: str = "all", group: str = "all", pct: bool = True) -> str:
        r = at.get((metric, breakdown, group))
        if r is None or r["value"] is None:
            return "—"
        return f"{100 * r['value']:.1f} (n={r['n']})" if pct else f"{r['value']:.1f} (n={r['n']})"

    def block(title: str, items: Sequence[tuple[str, str]]) -> list[str]:
        width = max(len(label) for label, _ in items)
        return [title, *(f"  {label:<{width}}  {value}" for label, value in items)]

    lines = block(
        "MMLongBench-Doc (its scoring rules on the short answer; %)",
        [("accuracy", cell("mmlb_accuracy")), ("F1", cell("mmlb_f1"))],
    )
    lines += block("by evidence source", [(s, cell("mmlb_accuracy", "evidence_source", s)) for s in _SOURCES])
    lines += block("by page span", [(s, cell("mmlb_accuracy", "page_span", s)) for s in _SPANS])
    formats = sorted(g for m, b, g in at if m == "mmlb_accuracy" and b == "answer_format")
    lines += block("by answer format", [(f, cell("mmlb_accuracy", "answer_format", f)) for f in formats])
    types = sorted(g for m, b, g in at if m == "mmlb_accuracy" and b == "doc_type")
    lines += block("by document type", [(t, cell("mmlb_accuracy", "doc_type", t)) for t in types])
    lines += block("page recall (%)", [(f"@{k}", cell(f"page_recall@{k}")) for k in PAGE_RECALL_KS])
    checks = [(label, cell(m, pct=m != "median_words")) for m, label in _ANSWER_CHECKS]
    lines += block("answer checks (%)", checks)
    return "\n".join(lines)
