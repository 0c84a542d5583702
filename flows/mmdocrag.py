"""MMDocRAG's format in and out: `interleaf eval --mmdocrag FILE` answers its fixed 15- or
20-quote contexts and scores them with its metrics; `interleaf export --mmdocrag` writes our own
questions, contexts and answers in its format and as fine-tuning records.

The evaluation is two stages (interleaf/evaluate/mmdocrag_stage.py) run through `run_unit`, like
every stage: answers, citations and scores are stored under their fingerprints (the file's content
is the unit), the ledger has a row per stage, malformed lines and generator errors are rejects, and
a second run recomputes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flows.query import QueryRun, answered_of
from interleaf.config import Settings
from interleaf.evaluate.mmdocrag import LineReject, read_mmdocrag
from interleaf.evaluate.mmdocrag_stage import MMDocRAGAnswerStage, MMDocRAGEvaluateStage, mmdocrag_unit
from interleaf.generate.protocol import AnswerRequest
from pipeline.context import RunContext, new_run_id
from pipeline.stage_task import Plan, UnitResult, publish, run_unit
from warehouse import Warehouse


@dataclass
class MMDocRAGRun:
    run_id: str  # the run that computed the scores (an earlier one when they were stored)
    qset_id: str
    rows: list[dict]
    rejects: list[LineReject]
    cached: bool
    results: list[UnitResult]
    fingerprints: dict[str, str]  # stage -> the fingerprint its outputs are stored under


def mmdocrag_plan(settings: Settings, input_mode: str) -> Plan:
    generate = settings.generate.model_copy(update={"input_mode": input_mode})
    return Plan.of([MMDocRAGAnswerStage(generate), MMDocRAGEvaluateStage(settings.evaluate)])


def run_mmdocrag(root: Path, settings: Settings, path: str, images: str | None, input_mode: str) -> MMDocRAGRun:
    wh = Warehouse(root)
    file = read_mmdocrag(path, images, require_images=input_mode == "multimodal")
    unit = mmdocrag_unit(path)
    plan = mmdocrag_plan(settings, input_mode)
    ctx = RunContext(new_run_id(), "mmdocrag", str(wh.root), settings)
    results = [run_unit(ctx, plan, name, unit, source=file, path=str(file.path)) for name in plan.names()]
    publish(ctx, plan, "mmdocrag", unit=unit)
    rows = wh.read_part("eval_metrics", plan.fingerprints["mmdocrag_evaluate"], unit).to_pylist()
    cached = all(r.status == "cached" for r in results)
    run_id = rows[0]["run_id"] if rows else ctx.run_id
    return MMDocRAGRun(run_id, unit, rows, list(file.rejects), cached, results, plan.fingerprints)


def export_mmdocrag(run: QueryRun, scope: str, out: Path, finetune: Path | None) -> int:
    """Our stored questions, contexts and answers in MMDocRAG's format; gold quotes are the context
    quotes matching each question's evidence."""
    from interleaf.evaluate.mmdocrag import item_from_request, write_finetune, write_mmdocrag
    from interleaf.generate.prompting import answer_conversation, answer_prompt

    tables = run.inputs(("quotes", "questions"), scope=scope)
    layout = {r["quote_id"]: r["layout_idx"] for r in tables["quotes"].select(["quote_id", "layout_idx"]).to_pylist()}
    questions = {q["question_id"]: q for q in tables["questions"].to_pylist()}
    items = []
    for a in answered_of(run, scope):
        r, q = a.record, questions[a.record.question_id]
        items.append(
            item_from_request(
                AnswerRequest(r.question_id, r.question, r.context),
                layout_ids=layout,
                answer_interleaved=r.answer_markdown,
                answer_short=q["answer"] or "",
                gold_quote_ids=r.gold.all,
                question_type=q["question_type"] or "",
                evidence_modality_type=a.facts.evidence_types,
                doc_name=q["doc_name"],
            )
        )
    count = write_mmdocrag(items, out, images_from=run.warehouse.root)
    if finetune is not None:
        system = answer_prompt("text").render()
        write_finetune(items, finetune, lambda r: answer_conversation(r.question, r.quotes, "text")[1].text, system)
    return count
