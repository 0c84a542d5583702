"""MMDocRAG's format in and out: `interleaf eval --mmdocrag FILE` answers its fixed 15- or
20-quote contexts and scores them with its metrics; `interleaf export --mmdocrag` writes our own
questions, contexts and answers in its format and as fine-tuning records.

The scores are stored like every evaluation's, in `eval_metrics`, under a fingerprint of the file's
content and the generate and judge configuration, so a second run recomputes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flows.query import QueryRun, answered_of
from interleaf.config import Settings
from interleaf.evaluate.answers import Answered, metric_rows
from interleaf.evaluate.metrics import ByModality, QuestionRecord, cited_from_answer
from interleaf.evaluate.mmdocrag import LineReject, image_loader, read_mmdocrag
from interleaf.fingerprint import canonical_json, sha256_file
from interleaf.generate.citations import check_answer
from interleaf.generate.protocol import AnswerRequest
from interleaf.generate.registry import get_chat_model, get_generator
from interleaf.stage import source_digest
from tasks.context import new_run_id
from tasks.stage_task import LazyTables
from warehouse import Warehouse, schemas

SOURCES = ("interleaf.evaluate", "interleaf.generate", "interleaf.text")


@dataclass
class MMDocRAGRun:
    run_id: str
    qset_id: str
    rows: list[dict]
    rejects: list[LineReject]
    cached: bool


def run_mmdocrag(root: Path, settings: Settings, path: str, images: str | None, input_mode: str) -> MMDocRAGRun:
    wh = Warehouse(root)
    generate = settings.generate.model_copy(update={"input_mode": input_mode})
    judge = settings.evaluate.judge
    qset_id = f"mmdocrag:{Path(path).stem}:{sha256_file(Path(path))[:12]}"
    payload = {
        "file": qset_id,
        "generate": generate.model_dump(exclude={"openai": {"base_url", "concurrency", "timeout_s", "retries"}}),
        "judge": judge.fingerprint_config(),
        "source": source_digest(SOURCES),
    }
    fingerprint = hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:16]
    part = qset_id.replace(":", "_")
    file = read_mmdocrag(path, images, require_images=input_mode == "multimodal")
    if wh.has_part("eval_metrics", fingerprint, part):
        rows = wh.read_part("eval_metrics", fingerprint, part).to_pylist()
        return MMDocRAGRun(rows[0]["run_id"] if rows else "", qset_id, rows, list(file.rejects), True)

    load_image = image_loader(file.images_root)
    requests = [item.request(input_mode, file.images_root) for item in file.items]  # type: ignore[arg-type]
    answers = get_generator(generate).generate(requests, load_image)
    answered = []
    for item, request, answer in zip(file.items, requests, answers, strict=True):
        checked = check_answer(answer.markdown, request.quotes)
        record = QuestionRecord(
            question_id=item.question_id,
            question=item.question,
            gold=ByModality(item.gold_text_ids, item.gold_image_ids),
            cited=cited_from_answer(answer.markdown, request.quotes),
            context=request.quotes,
            answer_markdown=checked.markdown,
            short_answer=item.answer_short,
            reference_answer=item.answer_interleaved,
            checked=checked,
            question_type=item.question_type,
        )
        answered.append(Answered(record, item.facts()))
    model = get_chat_model(judge.as_generate()) if judge.backend != "none" else None
    metrics = metric_rows(answered, model, judge.families, judge.max_tokens, load_image if judge.images else None)
    run_id = new_run_id()
    key = {"run_id": run_id, "qset_id": qset_id, "variant": settings.evaluate.variant, "scope": "fixed"}
    table = pa.Table.from_pylist([key | m for m in metrics], schema=schemas.EVAL_METRICS)
    wh.write_part("eval_metrics", fingerprint, part, table)
    wh.publish(f"mmdocrag:{part}", {"evaluate": (fingerprint, ("eval_metrics",))})
    return MMDocRAGRun(run_id, qset_id, table.to_pylist(), list(file.rejects), False)


def export_mmdocrag(run: QueryRun, scope: str, out: Path, finetune: Path | None) -> int:
    """Our stored questions, contexts and answers in MMDocRAG's format; gold quotes are the context
    quotes matching each question's evidence."""
    from interleaf.evaluate.mmdocrag import item_from_request, write_finetune, write_mmdocrag
    from interleaf.generate.prompting import answer_conversation, answer_prompt

    plan = run.plans[("full", scope)]
    tables = LazyTables.inputs(run._wh, plan, plan.stage("evaluate"), run.qset.qset_id)
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
    count = write_mmdocrag(items, out, images_from=run._wh.root)
    if finetune is not None:
        system = answer_prompt("text").render()
        write_finetune(items, finetune, lambda r: answer_conversation(r.question, r.quotes, "text")[1].text, system)
    return count
