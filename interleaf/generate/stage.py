"""The generate stage: each question's retrieved context -> an interleaved, cited answer, every
citation checked against the quote it names (MMDocRAG §2.1, §3).

The context is the retrieve stage's at `generate.budget` (15 = 5 images + 10 texts by default),
numbered per modality in context order, or shuffled with a fixed seed (MMDocRAG footnote 7).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from interleaf.expand.stage import clauses_by_question
from interleaf.generate.citations import check_answer
from interleaf.generate.config import GenerateConfig
from interleaf.generate.continued_lists import continued_lists
from interleaf.generate.item_count import counted_items
from interleaf.generate.listed_items import items_listed
from interleaf.generate.part_titles import parts_named
from interleaf.generate.protocol import (
    AnswerRequest,
    CheckedAnswer,
    ContextQuote,
    GeneratedAnswer,
    Generator,
    relevance_order,
)
from interleaf.generate.sentences import strip_marks
from interleaf.generate.statement_values import statement_lines
from interleaf.kinds import modality_of
from interleaf.stage import StageInput, StageOutput
from interleaf.structure.pages import floats_by_page, named_pages, page_numbering, page_references
from interleaf.vlm.openai_chat import ModelServerError
from warehouse import schemas

STAGE = "generate"


def quote_rows(quotes: pa.Table, quote_texts: pa.Table, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The context quotes' rows, with their described text forms joined in."""
    cols = ["quote_id", "doc_id", "page_idx", "kind", "text", "caption", "img_path", "bbox"]
    rows = {r["quote_id"]: r for r in quotes.select(cols).to_pylist() if r["quote_id"] in wanted}
    for t in quote_texts.select(["quote_id", "ocr_text", "table_md", "vlm_text"]).to_pylist():
        if t["quote_id"] in rows:
            rows[t["quote_id"]] |= {k: t[k] for k in ("ocr_text", "table_md", "vlm_text")}
    return rows


def image_text(row: Mapping[str, Any], prefer: str) -> str:
    """An image quote as text: its VLM-text or OCR-text (the other one where it is missing), else
    its caption. A table's OCR-text is its Markdown rows."""
    ocr = row.get("table_md") or row.get("ocr_text")
    first, second = (row.get("vlm_text"), ocr) if prefer == "vlm" else (ocr, row.get("vlm_text"))
    return first or second or row.get("caption") or ""


def document_texts(quotes: pa.Table, quote_texts: pa.Table, doc_ids: set[str]) -> dict[str, str]:
    """doc_id -> every text form of its quotes (text, caption, OCR-text or table Markdown, VLM-text),
    in reading order, for the documents in `doc_ids`."""
    if not doc_ids:
        return {}
    # filtered in Arrow first: a warehouse of many documents is not turned into Python rows whole
    own = quotes.select(["quote_id", "doc_id", "text", "caption"]).filter(
        pa.compute.is_in(quotes.column("doc_id"), value_set=pa.array(sorted(doc_ids), pa.string()))
    )
    forms_of = quote_texts.select(["quote_id", "ocr_text", "table_md", "vlm_text"]).filter(
        pa.compute.is_in(quote_texts.column("quote_id"), value_set=own.column("quote_id").combine_chunks())
    )
    described = {t["quote_id"]: t for t in forms_of.to_pylist()}
    pieces: dict[str, list[str]] = {d: [] for d in doc_ids}
    for r in own.to_pylist():
        t = described.get(r["quote_id"], {})
        forms = (r["text"], r["caption"], t.get("table_md") or t.get("ocr_text"), t.get("vlm_text"))
        pieces[r["doc_id"]].extend(f for f in forms if f)
    return {d: "\n".join(p) for d, p in pieces.items()}


def build_requests(
    questions: pa.Table,
    contexts: pa.Table,
    clauses: pa.Table,
    quotes: pa.Table,
    quote_texts: pa.Table,
    documents: pa.Table,
    config: GenerateConfig,
    doc_scope: bool = False,
) -> list[AnswerRequest]:
    """One AnswerRequest per question, its context at `config.budget`; `doc_scope`: with the text of
    the documents each is asked about (`AnswerRequest.documents_text`). Pure."""
    picked = contexts.filter(pa.compute.equal(contexts.column("budget"), config.budget)).to_pylist()
    by_question: dict[str, list[tuple[tuple[bool, float, int], str]]] = {}
    scores: dict[str, dict[str, float]] = {}
    for r in picked:  # relevance: by score, the position breaking ties; else by position
        key = (
            relevance_order(r["score"], r["position"])
            if config.quote_order == "relevance"
            else (False, 0.0, r["position"])
        )
        by_question.setdefault(r["question_id"], []).append((key, r["quote_id"]))
        scores.setdefault(r["question_id"], {})[r["quote_id"]] = r["score"]
    asked = questions.select(["question_id", "question", "doc_ids"]).to_pylist()
    # a count of the question's document's tables is read from all of them: their quotes join the
    # context, cited (in either scope, so that the stored answers' contexts are rebuilt the same)
    counts = counted_items(quotes, [(q["question_id"], q["question"], q["doc_ids"] or ()) for q in asked])
    of_one_document = [(q["question_id"], q["question"], q["doc_ids"] or ()) for q in asked]
    titled = parts_named(quotes, of_one_document)
    listed = items_listed(quotes, of_one_document)
    statements = statement_lines(quotes, of_one_document)
    joining = (*counts.values(), *titled.values(), *listed.values(), *statements.values())
    extra = {quote_id for items in joining for _, quote_id in items}
    # a list the next page goes on with: the quote continuing it joins each context holding its start
    continued = continued_lists(quotes, {r["quote_id"] for r in picked} | extra)
    extra |= set(continued.values())
    rows = quote_rows(quotes, quote_texts, {r["quote_id"] for r in picked} | extra)
    docs = documents.select(["doc_id", "name", "title"]).to_pylist()
    names = {d["doc_id"]: d["name"] for d in docs}
    titles = {d["doc_id"]: d["title"] for d in docs}
    clause_texts = clauses_by_question(clauses)
    texts = document_texts(quotes, quote_texts, {d for q in asked for d in q["doc_ids"] or ()} if doc_scope else set())
    naming = {d for q in asked if doc_scope and page_references(q["question"]) for d in q["doc_ids"] or ()}
    numbering = page_numbering(quotes, naming)
    on_page = floats_by_page(quotes) if naming else {}  # what the pages questions name hold
    requests = []
    for q in asked:
        ids = [quote_id for _, quote_id in sorted(by_question.get(q["question_id"], []))]
        if config.quote_order == "shuffled":  # seeded per question: the same order on every run
            random.Random(f"{config.seed}:{q['question_id']}").shuffle(ids)
        counted = counts.get(q["question_id"], ())
        named, items = titled.get(q["question_id"], ()), listed.get(q["question_id"], ())
        statement = statements.get(q["question_id"], ())
        joined = dict.fromkeys(i for _, i in (*counted, *named, *items, *statement))
        ids += [quote_id for quote_id in joined if quote_id not in ids]
        runs_on = tuple((i, continued[i]) for i in ids if i in continued)
        ids += list(dict.fromkeys(after for _, after in runs_on if after not in ids))
        context = context_quotes(ids, rows, names, titles, config.image_text, scores.get(q["question_id"], {}))
        cs = tuple(c.text for c in clause_texts.get(q["question_id"], []))
        scope = (q["doc_ids"] or ()) if doc_scope else ()
        in_scope = "\n".join(texts[d] for d in scope) if scope else None
        pages = named_pages(q["question"], {d: numbering[d] for d in scope if d in numbering})
        floats = frozenset().union(*(on_page.get(p, ()) for p in pages))
        requests.append(
            AnswerRequest(
                q["question_id"],
                q["question"],
                context,
                cs,
                in_scope,
                pages,
                floats,
                counted,
                named,
                items,
                statement,
                runs_on,
            )
        )
    return requests


def context_quotes(
    ids: list[str],
    rows: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, str],
    titles: Mapping[str, str | None],
    image_text_form: str,
    scores: Mapping[str, float] | None = None,
) -> tuple[ContextQuote, ...]:
    """The quotes `ids` (their `quote_rows`) as the generator is given them, in that order: numbered
    within their modality, an image quote as its `image_text`; `scores`: their retrieval scores."""
    numbers = {"text": 0, "image": 0}
    context = []
    for quote_id in ids:
        row = rows[quote_id]
        modality = modality_of(row["kind"])
        numbers[modality] += 1
        text = image_text(row, image_text_form) if modality == "image" else row["text"]
        context.append(
            ContextQuote(
                quote_id=quote_id,
                modality=modality,
                number=numbers[modality],
                doc_id=row["doc_id"],
                doc_name=names.get(row["doc_id"], row["doc_id"][:16]),
                page_idx=row["page_idx"],
                kind=row["kind"],
                text=text,
                caption=row["caption"],
                img_path=row["img_path"],
                bbox=tuple(row["bbox"]) if row["bbox"] else None,
                ocr_text=row.get("table_md") or row.get("ocr_text"),
                vlm_text=row.get("vlm_text"),
                score=(scores or {}).get(quote_id),
                doc_title=titles.get(row["doc_id"]),
            )
        )
    return tuple(context)


class GenerateStage:
    """Contexts -> `answers` and `citations`."""

    name = STAGE
    unit = "question_set"
    page_work = False
    inputs = ("questions", "contexts", "clauses", "documents", "quotes", "quote_texts")
    outputs = ("citations", "answers")
    upstream = ("retrieve",)
    sources = ("interleaf.generate", "interleaf.text", "interleaf.kinds", "interleaf.vlm", "interleaf.structure.pages")
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(self, config: GenerateConfig, scope: str, generator: Generator | None = None) -> None:
        self.settings, self.scope = config, scope
        self._generator = generator

    @property
    def generator(self) -> Generator:
        if self._generator is None:
            from interleaf.generate.registry import get_generator

            self._generator = get_generator(self.settings)
        return self._generator

    def config(self) -> dict[str, Any]:
        c = self.settings
        common = c.model_dump(exclude={"offline", "openai", "transformers"})
        # where the server is and how fast it is asked do not change the answer; the model does
        section = {
            "offline": lambda: c.offline.model_dump(),
            "openai": lambda: c.openai.model_dump(include={"model", "max_tokens", "temperature"}),
            "transformers": lambda: c.transformers.model_dump(exclude={"device", "batch_size"}),
        }[c.backend]()
        return {**common, c.backend: section, "scope": self.scope}

    def prompt_hashes(self) -> list[str]:
        return self.generator.prompt_hashes()

    def version(self) -> dict[str, str]:
        return self.generator.version()

    def run(self, given: StageInput) -> StageOutput:
        t = given.tables
        requests = build_requests(
            t["questions"],
            t["contexts"],
            t["clauses"],
            t["quotes"],
            t["quote_texts"],
            t["documents"],
            self.settings,
            doc_scope=self.scope == "doc",
        )
        generated = self.generator.generate(requests, lambda img_path: (given.root / img_path).read_bytes())
        if failed := [a.error or "failed" for a in generated if a.server_failed]:
            # an answer the server failed to give is no answer: stored, it would stand for one on every rerun
            raise ModelServerError(self.settings.openai.base_url, len(failed), len(generated), failed[0])
        answers, citations, rejects = [], [], []
        prompt_hash = ",".join(sorted(self.prompt_hashes())) or None
        for request, answer in zip(requests, generated, strict=True):
            checked = check_answer(answer.markdown, request.quotes, question=request.question)
            key = {"qset_id": given.unit, "question_id": request.question_id, "scope": self.scope}
            answers.append(key | answer_row(request, answer, checked, self.generator, prompt_hash))
            citations += [key | row for row in citation_rows(checked, request)]
            if answer.error:
                rejects.append((request.question_id, f"generate ({self.generator.name}): {answer.error}"))
        return StageOutput(
            {
                "citations": pa.Table.from_pylist(citations, schema=schemas.CITATIONS),
                "answers": pa.Table.from_pylist(answers, schema=schemas.ANSWERS),
            },
            rejects=rejects,
            counts={"answers": len(answers), "citations": len(citations)},
        )


def answer_row(
    request: AnswerRequest,
    answer: GeneratedAnswer,
    checked: CheckedAnswer,
    generator: Generator,
    prompt_hash: str | None,
) -> dict[str, Any]:
    return {
        "question": request.question,
        "answer_md": checked.markdown,
        "short_answer": answer.short_answer,
        "raw_md": answer.markdown,
        "generator": generator.name,
        "model": answer.model or generator.model,
        "input_mode": generator.input_mode,
        "prompt_hash": prompt_hash,
        "context_quotes": len(request.quotes),
        "words": len(strip_marks(checked.markdown, keep_alt=True).split()),
        "invalid_citations": checked.invalid,
        "repaired_citations": checked.repaired,
        "tokens_in": answer.tokens_in,
        "tokens_out": answer.tokens_out,
        "seconds": answer.seconds,
        "created_at": datetime.now(UTC),
        "error": answer.error,
        "answerable": _abstain_reason(answer, checked) is None,
        "abstain_reason": _abstain_reason(answer, checked),
        "addresses_question": bool(checked.relevance and checked.relevance.addresses),
        "relevance_reason": checked.relevance.reason if checked.relevance else "not checked",
    }


def _abstain_reason(answer: GeneratedAnswer, checked: CheckedAnswer) -> str | None:
    """Why the answer says the documents do not answer (None when it answers): the generator's own
    reason, or, for a model's answer, its sentences saying so in every part."""
    if not answer.answerable:
        return answer.abstain_reason or "abstained"
    if not answer.markdown.strip():
        return answer.error or "empty answer"
    if checked.relevance is not None and checked.relevance.said_missing:
        return answer.abstain_reason or checked.relevance.reason
    return None


def citation_rows(checked: CheckedAnswer, request: AnswerRequest) -> list[dict[str, Any]]:
    labels = {q.quote_id: q.label for q in request.quotes}
    return [
        {"sentence_idx": s.index, "sentence": s.text, "quote_id": c.quote_id, "modality": c.modality}
        | {"label": labels[c.quote_id], "supported": c.supported, "reason": c.reason}
        for s in checked.sentences
        for c in s.citations
        if c.quote_id is not None
    ]
