"""The evaluate stage: a question set's contexts against its gold evidence -> recall@k rows.

Evidence matching is the corpus README's (interleaf/evidence.py): same document and page, and the
needle inside the quote's text, caption or (image quotes) OCR / table / VLM text.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from interleaf.evaluate.answers import answered_questions, citation_validity, metric_rows, retrieval_rows
from interleaf.evaluate.config import EvaluateConfig, JudgeConfig
from interleaf.evaluate.metric_rows import measured_by
from interleaf.evaluate.metrics import judge_prompt_hashes
from interleaf.evaluate.mmlongbench_rows import EXTRACTION_PROMPT, mmlongbench_rows
from interleaf.evaluate.recall import Evidence, EvidenceOutcome, QAItem, counts, outcomes, recall_table
from interleaf.generate.config import GenerateConfig
from interleaf.generate.registry import get_chat_model
from interleaf.index.corpus import QuoteCorpus
from interleaf.prompts import load_prompt
from interleaf.stage import StageInput, StageOutput
from interleaf.stored_answers import read_stored_answers
from interleaf.versions import package_versions
from warehouse import schemas

STAGE = "evaluate"
# BLEU and ROUGE-L follow their reference implementations: a new release may move the figures
OVERLAP_PACKAGES = ("nltk", "rouge-score", "sacrebleu")


def judge_prompts(judge: JudgeConfig) -> list[str]:
    """The hashes of the judge's prompts (none without a judge): for an answer-scoring stage's fingerprint."""
    if judge.backend == "none":
        return []
    # the benchmark's extraction prompt reads a short answer for MMLongBench-Doc's score
    return sorted([*judge_prompt_hashes(judge.families).values(), load_prompt(EXTRACTION_PROMPT).hash])


def judge_version(judge: JudgeConfig) -> dict[str, str]:
    if judge.backend == "none":
        return {}
    return {"judge_model": getattr(judge, judge.backend).model, **package_versions(OVERLAP_PACKAGES)}


def qa_items(questions: pa.Table) -> list[QAItem]:
    items = []
    for q in questions.to_pylist():
        evidence = json.loads(q["evidence_json"]) if q["evidence_json"] else []
        items.append(
            QAItem(
                q["question_id"],
                q["doc_name"] or "",
                q["question"],
                tuple(Evidence(int(e["page"]), e.get("modality", "text"), e["needle"]) for e in evidence),
            )
        )
    return items


def evidence_corpus(quotes: pa.Table, quote_texts: pa.Table) -> QuoteCorpus:
    """Every quote with the texts an evidence needle is sought in."""
    described: dict[str, list[str]] = {}
    for r in quote_texts.select(["quote_id", "ocr_text", "table_md", "vlm_text"]).to_pylist():
        described[r["quote_id"]] = [t for t in (r["ocr_text"], r["table_md"], r["vlm_text"]) if t]
    corpus = QuoteCorpus()
    for r in quotes.select(["quote_id", "doc_id", "page_idx", "kind", "text", "caption", "img_path"]).to_pylist():
        corpus.quote_ids.append(r["quote_id"])
        corpus.doc_ids.append(r["doc_id"])
        corpus.page_idx.append(r["page_idx"])
        corpus.kinds.append(r["kind"])
        corpus.texts.append(r["text"])
        corpus.match_texts.append([r["text"], r["caption"], *described.get(r["quote_id"], [])])
        corpus.img_paths.append(r["img_path"])
    return corpus


def contexts_by_question(contexts: pa.Table) -> dict[str, dict[int, list[str]]]:
    out: dict[str, dict[int, list[tuple[int, str]]]] = {}
    for r in contexts.select(["question_id", "budget", "position", "quote_id"]).to_pylist():
        out.setdefault(r["question_id"], {}).setdefault(r["budget"], []).append((r["position"], r["quote_id"]))
    return {q: {b: [x for _, x in sorted(v)] for b, v in by.items()} for q, by in out.items()}


class EvaluateStage:
    """Contexts (and, later, answers) against the gold of a question set -> evaluation rows."""

    name = STAGE
    unit = "question_set"
    page_work = False
    inputs: tuple[str, ...] = ("questions", "contexts", "documents", "quotes", "quote_texts")
    outputs: tuple[str, ...] = ("eval_evidence", "eval_results")
    upstream: tuple[str, ...] = ("retrieve",)
    sources = ("interleaf.evaluate", "interleaf.evidence", "interleaf.stored_answers")
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(
        self, config: EvaluateConfig, scope: str, budgets: list[int], generate: GenerateConfig | None = None
    ) -> None:
        """`generate`: the configuration the answers were generated with (None: retrieval only)."""
        self.settings, self.scope, self.budgets, self.generate = config, scope, budgets, generate
        self.with_answers = generate is not None
        if generate is not None:
            self.inputs = (*EvaluateStage.inputs, "hits", "clauses", "answers", "citations")
            self.outputs = ("eval_evidence", "eval_metrics", "eval_results")
            self.upstream = ("retrieve", "generate")

    def config(self) -> dict[str, Any]:
        shape = {"scope": self.scope, "budgets": self.budgets, "answers": self.with_answers}
        judge = self.settings.judge.fingerprint_config() if self.with_answers else None
        return {"variant": self.settings.variant, "judge": judge, **shape}

    def prompt_hashes(self) -> list[str]:
        return judge_prompts(self.settings.judge) if self.with_answers else []

    def version(self) -> dict[str, str]:
        return judge_version(self.settings.judge) if self.with_answers else {}

    def run(self, given: StageInput) -> StageOutput:
        t = given.tables
        items = qa_items(t["questions"])
        names = {d["name"]: d["doc_id"] for d in t["documents"].select(["name", "doc_id"]).to_pylist()}
        corpus = evidence_corpus(t["quotes"], t["quote_texts"])
        outs = outcomes(corpus, items, names, contexts_by_question(t["contexts"]))
        key = {"qset_id": given.unit, "variant": self.settings.variant, "scope": self.scope}
        source = t["questions"].column("source")[0].as_py() if t["questions"].num_rows else ""
        n_evidence = counts(outs)
        rows = [
            key | {"modality": group, "k": k, "recall": value, "n_evidence": n_evidence[group], "qa_file": source}
            for group, by_k in recall_table(outs, self.budgets).items()
            for k, value in by_k.items()
        ]
        tables = {
            "eval_evidence": pa.Table.from_pylist(
                _evidence_rows(key, items, outs, self.budgets), schema=schemas.EVAL_EVIDENCE
            ),
            "eval_results": pa.Table.from_pylist(rows, schema=schemas.EVAL_RESULTS),
        }
        if self.generate is not None:
            metrics = self.answer_metrics(given, corpus, names, outs)
            key = key | {"run_id": given.run_id, "measured_by": measured_by()}
            tables["eval_metrics"] = pa.Table.from_pylist([key | m for m in metrics], schema=schemas.EVAL_METRICS)
        return StageOutput(tables)

    def answer_metrics(
        self, given: StageInput, corpus: QuoteCorpus, names: dict[str, str], outs: list[EvidenceOutcome]
    ) -> list[dict[str, Any]]:
        assert self.generate is not None
        t = given.tables
        stored = read_stored_answers(t, self.generate)
        answered = answered_questions(t["questions"].to_pylist(), stored, corpus, names)
        judge_config = self.settings.judge
        judge = get_chat_model(judge_config.as_generate()) if judge_config.backend != "none" else None
        load_image = (lambda p: (given.root / p).read_bytes()) if judge_config.images else None
        rows = metric_rows(answered, judge, judge_config.families, judge_config.max_tokens, load_image)
        gold: dict[str, set[str]] = {}
        for o in outs:
            gold.setdefault(o.question_id, set()).update(o.matches)
        rows += retrieval_rows(t["hits"].to_pylist(), gold, self.budgets)
        rows.append(citation_validity(answered))
        rows += mmlongbench_rows(
            t["questions"].to_pylist(),
            stored,
            _ranked_pages(t["contexts"], max(self.budgets)),
            names,
            judge,
            judge_config.max_tokens,
        )
        for group, by_k in recall_table(outs, self.budgets).items():  # the evidence-level recall of the README
            for k, value in by_k.items():
                name = f"recall@{k}"
                where = ("all", "all") if group == "all" else ("evidence_modality", group)
                rows.append(
                    {"metric": name, "value": value, "n": counts(outs)[group], "breakdown": where[0]}
                    | {"group_name": where[1], "note": "evidence items found in the context"}
                )
        return rows


def _ranked_pages(contexts: pa.Table, budget: int) -> dict[str, list[tuple[str, int]]]:
    """question_id -> its context's (doc_id, page_idx) in rank order, at `budget` quotes."""
    out: dict[str, list[tuple[int, str, int]]] = {}
    for r in contexts.select(["question_id", "budget", "position", "doc_id", "page_idx"]).to_pylist():
        if r["budget"] == budget:
            out.setdefault(r["question_id"], []).append((r["position"], r["doc_id"], r["page_idx"]))
    return {q: [(d, p) for _, d, p in sorted(v)] for q, v in out.items()}


def _evidence_rows(
    key: dict[str, str], items: list[QAItem], outs: list[EvidenceOutcome], budgets: list[int]
) -> list[dict[str, Any]]:
    evidence = {(i.id, n): e for i in items for n, e in enumerate(i.evidence)}
    return [
        key
        | {"question_id": o.question_id, "evidence_idx": o.evidence_idx, "modality": o.group}
        | {
            "page": evidence[(o.question_id, o.evidence_idx)].page,
            "needle": evidence[(o.question_id, o.evidence_idx)].needle,
        }
        | {"matching_quotes": len(o.matches), "budget": b, "rank": o.first_rank.get(b)}
        for o in outs
        for b in budgets
    ]
