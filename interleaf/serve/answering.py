"""One question through the answer flow, as `interleaf ask` answers it, and the answer as the API
returns it: Markdown whose images are URLs of this server, and the citations as data.

The question goes through the same path as the CLI (`flows.query.run_queries` with the server's
loaded index, then `answer_views`): every stage's output is stored, so the same question asked
again is read back, and `interleaf sql` shows what the server answered. The scope rules are
interleaf/scope.py's, checked before anything runs so that a bad request gets its status at once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interleaf.config import Settings
from interleaf.generate.protocol import AnswerRequest, ContextQuote, GeneratedAnswer, Generator, ImageLoader
from interleaf.render import AnswerView
from interleaf.render.marking import IMAGE_PLACEMENT
from interleaf.render.view import QuoteIndex
from interleaf.scope import DocumentRef, NoDocumentNamed, check_question, check_scope
from interleaf.serve.errors import ApiError, backend_down
from interleaf.serve.state import ServerState

TokenSink = Callable[[str], None]


def link_images(text: str, quotes: QuoteIndex, image_url: Callable[[ContextQuote], str]) -> str:
    """`![alt](imageN)` -> `![alt](<URL of image N's crop>)`; a number outside the context stays."""

    def linked(match: re.Match[str]) -> str:
        quote = quotes.image(int(match.group(2)))
        if quote is None or not quote.img_path:
            return match.group(0)
        return f"![{match.group(1)}]({image_url(quote)})"

    return IMAGE_PLACEMENT.sub(linked, text)


@dataclass(frozen=True)
class Ask:
    """A question as the API takes it, checked (`prepare`)."""

    question: str
    documents: tuple[DocumentRef, ...] = ()
    scope: str = "corpus"
    budget: int = 15
    context: str | None = None  # earlier turns of a chat: more clauses for query expansion


@dataclass
class Answered:
    ask: Ask
    view: AnswerView
    row: dict[str, Any]  # the stored `answers` row
    qset_id: str
    seconds: float
    stored: bool  # every stage was stored already: nothing ran


def prepare(
    state: ServerState,
    question: Any,
    documents: list[str] | None = None,
    scope: str | None = None,
    budget: int | None = None,
    context: str | None = None,
) -> Ask:
    """The request checked against the scope rules, before anything is retrieved."""
    if question is not None and not isinstance(question, str):
        raise ApiError(422, "bad_request", "`question` must be a string")
    text = check_question(question)
    limit = state.settings.serve.api.max_question_chars
    if len(text) > limit:
        raise ApiError(422, "question_too_long", f"the question has {len(text)} characters; at most {limit} are read")
    refs = state.snapshot.catalog.resolve_all(documents or [])
    scope = check_scope(scope or ("doc" if refs else "corpus"))
    if scope == "doc" and not refs:
        raise NoDocumentNamed("scope `doc` needs `documents`: the documents the question is about")
    budgets = state.settings.retrieve.budgets
    budget = budget if budget is not None else state.settings.generate.budget
    if budget not in budgets:
        raise ApiError(422, "bad_budget", f"budget {budget}: the contexts are cut at {budgets} quotes")
    if state.indexes.loaded is None and state.index_error:
        raise ApiError(503, "corpus_unavailable", state.index_error, {"Retry-After": "5"})
    return Ask(text, refs, scope, budget, context)


def settings_for(settings: Settings, ask: Ask) -> Settings:
    if ask.budget == settings.generate.budget:
        return settings
    return settings.model_copy(update={"generate": settings.generate.model_copy(update={"budget": ask.budget})})


class _Observed:
    """A generator that tells the caller which context each answer is written from before it
    writes it (a streamed answer's image placements become URLs as they arrive)."""

    def __init__(self, inner: Generator, seen: Callable[[list[AnswerRequest]], None]) -> None:
        self.inner, self._seen = inner, seen
        self.name, self.model, self.input_mode = inner.name, inner.model, inner.input_mode

    def prompt_hashes(self) -> list[str]:
        return self.inner.prompt_hashes()

    def version(self) -> dict[str, str]:
        return self.inner.version()

    def generate(self, requests: list[AnswerRequest], load_image: ImageLoader) -> list[GeneratedAnswer]:
        self._seen(requests)
        return self.inner.generate(requests, load_image)


class StreamLinker:
    """Streamed answer text with each `![alt](imageN)` made a URL of this server as soon as it is
    complete; text that may still become a placement is held back until it is decided."""

    _OPEN = re.compile(r"!(?:\[[^\]\n]*(?:\]\([^)\n]*)?)?$")  # a placement begun but not closed

    def __init__(self, sink: TokenSink, image_url: Callable[[ContextQuote], str]) -> None:
        self.sink, self.image_url = sink, image_url
        self.quotes: QuoteIndex | None = None
        self._held = ""
        self._lock = threading.Lock()

    def context(self, requests: list[AnswerRequest]) -> None:
        self.quotes = QuoteIndex(requests[0].quotes) if requests else None

    def feed(self, text: str) -> None:
        with self._lock:
            held = self._held + text
            begun = self._OPEN.search(held)
            cut = begun.start() if begun and len(held) - begun.start() < 300 else len(held)
            self._held = held[cut:]
            if cut:
                self.sink(self._link(held[:cut]))

    def flush(self) -> None:
        with self._lock:
            if self._held:
                self.sink(self._link(self._held))
            self._held = ""

    def _link(self, text: str) -> str:
        return link_images(text, self.quotes, self.image_url) if self.quotes else text


def answer(state: ServerState, ask: Ask, linker: StreamLinker | None = None) -> Answered:
    """Retrieve, generate and check, storing every stage's output (runs in a worker thread)."""
    from flows.query import answer_views, run_queries
    from interleaf.generate.registry import get_generator
    from interleaf.questions.stage import single_question

    started = time.perf_counter()
    settings = settings_for(state.settings, ask)
    qset = single_question(ask.question, [d.doc_id for d in ask.documents], ask.context)
    force_from = None
    for _attempt in range(2):
        generator: Generator = get_generator(settings.generate, linker.feed if linker else None)
        if linker is not None:
            generator = _Observed(generator, linker.context)
        run = run_queries(
            state.root,
            settings,
            qset,
            [ask.scope],
            force_from=force_from,
            use_prefect=False,
            evaluate=False,
            generator=generator,
            catalog=state.snapshot.catalog,
            indexes=state.indexes,
        )
        if linker is not None:
            linker.flush()
        view = answer_views(run, ask.scope)[0]
        ran = any(r.stage == "generate" and r.status == "ok" for r in run.results)
        if not view.error or ran:
            break
        force_from = "generate"  # a stored failure from an earlier outage: ask the model again
    if view.error:
        raise backend_down(_generator_name(settings), view.error)
    row = run.table("answers", scope=ask.scope).to_pylist()[0]
    stored = not run.results
    return Answered(ask, view, row, run.qset.qset_id, time.perf_counter() - started, stored)


def _generator_name(settings: Settings) -> str:
    g = settings.generate
    if g.backend == "openai":
        return f"the generator (openai: {g.openai.model} at {g.openai.base_url})"
    if g.backend == "transformers":
        return f"the generator (transformers: {g.transformers.model})"
    return f"the generator ({g.backend})"


# -- the answer as data ------------------------------------------------------------------------


class Urls:
    """Where this server serves a quote's parts (absolute, so a chat client can fetch them)."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def quote(self, quote_id: str) -> str:
        return f"{self.base}/v1/quotes/{quote_id}"

    def image(self, quote: ContextQuote) -> str:
        return f"{self.base}/v1/quotes/{quote.quote_id}/image"

    def page(self, doc_id: str, page_idx: int, quote_id: str | None = None) -> str:
        url = f"{self.base}/v1/documents/{doc_id}/pages/{page_idx + 1}.png"
        return f"{url}?quote={quote_id}" if quote_id else url


def citations(view: AnswerView, urls: Urls) -> list[dict[str, Any]]:
    """Each cited quote once, in first-citation order, with what the checker said of it."""
    quotes = {q.quote_id: q for q in view.quotes}
    verdicts: dict[str, list[tuple[int, bool, str]]] = {}
    for sentence in view.checked.sentences:
        for c in sentence.citations:
            if c.quote_id is not None:
                verdicts.setdefault(c.quote_id, []).append((sentence.index, c.supported, c.reason))
    out = []
    for quote_id in view.checked.cited_quote_ids:
        q = quotes.get(quote_id)
        if q is None:
            continue
        seen = verdicts.get(quote_id, [])
        out.append(
            {
                "label": q.label,
                "quote_id": q.quote_id,
                "document": q.doc_name,
                "doc_id": q.doc_id,
                "page": q.page_idx + 1,
                "bbox": list(q.bbox) if q.bbox else None,
                "modality": q.modality,
                "kind": q.kind,
                "text": q.text,
                "caption": q.caption,
                "supported": all(s for _, s, _ in seen) if seen else None,
                "reasons": [r for _, _, r in seen],
                "sentences": sorted({i for i, _, _ in seen}),
                "quote_url": urls.quote(q.quote_id),
                "page_url": urls.page(q.doc_id, q.page_idx, q.quote_id),
                "image_url": urls.image(q) if q.modality == "image" and q.img_path else None,
            }
        )
    return out


def markdown(view: AnswerView, urls: Urls) -> str:
    """The checked answer, each image placement pointing at the crop on this server."""
    return link_images(view.checked.markdown, QuoteIndex(view.quotes), urls.image)


def payload(answered: Answered, urls: Urls, html: bool = False) -> dict[str, Any]:
    """`POST /v1/ask`'s answer."""
    view, row = answered.view, answered.row
    out = {
        "id": f"ask-{answered.qset_id}",
        "object": "interleaf.answer",
        "question": view.question,
        "scope": answered.ask.scope,
        "budget": answered.ask.budget,
        "documents": [{"doc_id": d.doc_id, "name": d.name} for d in answered.ask.documents],
        "answer": markdown(view, urls),
        "answerable": row.get("answerable", True),
        "abstain_reason": row.get("abstain_reason"),
        "addresses_question": row.get("addresses_question"),
        "relevance_reason": row.get("relevance_reason"),
        "citations": citations(view, urls),
        "sentences": [
            {"text": s.text, "supported": s.supported, "citations": [c.quote_id for c in s.citations]}
            for s in view.checked.sentences
        ],
        "invalid_citations": view.checked.invalid,
        "generator": {"name": view.generator, "model": view.model},
        "timing": {"seconds": round(answered.seconds, 4), "generate_seconds": round(view.seconds, 4)}
        | {"stored": answered.stored},
        "qset_id": answered.qset_id,
    }
    if html:
        from interleaf.render.html import render_answer_body

        out["answer_html"] = render_answer_body(view, "a", urls.image)
    return out
