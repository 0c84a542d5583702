"""Small, readable question records for the metric tests: quotes written out, answers checked by
the real citation checker (`interleaf.generate.citations.check_answer`)."""

from __future__ import annotations

from interleaf.evaluate.metrics import ByModality, QuestionRecord, cited_from_answer
from interleaf.generate.citations import check_answer
from interleaf.generate.protocol import ContextQuote


def quote(
    quote_id: str, modality: str, number: int, text: str, kind: str | None = None, img_path: str | None = None
) -> ContextQuote:
    return ContextQuote(
        quote_id=quote_id,
        modality=modality,  # type: ignore[arg-type]
        number=number,
        doc_id="d1",
        doc_name="report.pdf",
        page_idx=0,
        kind=kind or ("text" if modality == "text" else "table"),
        text=text,
        img_path=img_path,
    )


def record(
    question_id: str,
    context: list[ContextQuote],
    answer: str,
    gold: ByModality | None = None,
    *,
    question: str = "What happened?",
    short_answer: str = "",
    reference_answer: str | None = None,
    question_type: str | None = None,
    atomic_facts: tuple[str, ...] | None = None,
) -> QuestionRecord:
    checked = check_answer(answer, context)
    return QuestionRecord(
        question_id=question_id,
        question=question,
        gold=gold or ByModality(),
        cited=cited_from_answer(answer, tuple(context)),
        context=tuple(context),
        answer_markdown=checked.markdown,
        short_answer=short_answer,
        reference_answer=reference_answer,
        checked=checked,
        question_type=question_type,
        atomic_facts=atomic_facts,
    )
