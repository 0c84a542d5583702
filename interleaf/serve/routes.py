"""Interleaf's own endpoints: ask, quotes, documents and their pages, uploads and jobs, health."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from interleaf.serve.answering import Urls, answer, payload, prepare
from interleaf.serve.app import Server, server_of
from interleaf.serve.errors import ApiError, api_error_of
from interleaf.serve.state import DocumentInfo, QuoteInfo
from interleaf.serve.streaming import SSE_HEADERS, Done, Failed, Token, answer_events, sse

router = APIRouter()
STARTED = time.time()


def reader(request: Request) -> Server:
    server = server_of(request)
    server.reader(request)
    return server


def writer(request: Request) -> Server:
    server = server_of(request)
    server.writer(request)
    return server


Reader = Annotated[Server, Depends(reader)]  # may read: open, or keyed (serve.api.read_access)
Writer = Annotated[Server, Depends(writer)]  # may upload: always keyed


def urls_of(request: Request) -> Urls:
    return Urls(str(request.base_url))


@router.get("/healthz")
def healthz(request: Request) -> dict[str, Any]:
    server = server_of(request)
    return (
        {"status": "ok", "uptime_s": round(time.time() - STARTED, 1)}
        | server.state.health()
        | {"jobs": len(server.jobs.active())}
    )


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Any = None  # checked by the scope rules: an empty or blank one is refused (422)
    documents: list[str] = []  # names (with or without .pdf, any case) or doc_id prefixes
    scope: str | None = None  # doc or corpus; default: doc when documents are named
    budget: int | None = None  # the context size answered from (one of retrieve.budgets)
    stream: bool = False  # server-sent events: `token`s as they are written, then `answer`
    html: bool = False  # also the answer as an HTML fragment (the web page's)


@router.post("/v1/ask", response_model=None)
async def ask(body: AskBody, request: Request, server: Reader) -> Any:
    checked = prepare(server.state, body.question, body.documents, body.scope, body.budget)
    urls = urls_of(request)
    if not body.stream:
        answered = await server.in_worker(answer, server.state, checked)
        return payload(answered, urls, body.html)

    async def events() -> Any:
        async for event in answer_events(server, checked, urls):
            if isinstance(event, Token):
                yield sse({"text": event.text}, "token")
            elif isinstance(event, Done):
                yield sse(payload(event.answered, urls, body.html), "answer")
            elif isinstance(event, Failed):
                yield sse(event.error.body(), "error")

    return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)


# -- quotes ------------------------------------------------------------------------------------


def _quote(server: Server, quote_id: str) -> QuoteInfo:
    quote = server.state.snapshot.quotes.get(quote_id)
    if quote is None:
        raise ApiError(404, "unknown_quote", f"no published quote has the id {quote_id!r}")
    return quote


@router.get("/v1/quotes/{quote_id}")
def quote(quote_id: str, request: Request, server: Reader) -> dict[str, Any]:
    q = _quote(server, quote_id)
    doc = server.state.snapshot.documents.get(q.doc_id)
    urls = urls_of(request)
    return {
        "object": "interleaf.quote",
        "quote_id": q.quote_id,
        "doc_id": q.doc_id,
        "document": doc.name if doc else None,
        "page": q.page_idx + 1,
        "bbox": list(q.bbox),
        "kind": q.kind,
        "modality": q.modality,
        "text": q.text,
        "caption": q.caption,
        "ocr_text": q.ocr_text,
        "table_md": q.table_md,
        "vlm_text": q.vlm_text,
        "page_url": urls.page(q.doc_id, q.page_idx, q.quote_id),
        "image_url": f"{urls.quote(q.quote_id)}/image" if q.img_path else None,
    }


def _image_type(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    return "application/octet-stream"


@router.get("/v1/quotes/{quote_id}/image")
def quote_image(quote_id: str, server: Reader) -> Response:
    q = _quote(server, quote_id)
    if not q.img_path:
        raise ApiError(404, "no_image", f"quote {quote_id} is {q.kind} text: it has no image")
    root = server.state.root.resolve()
    path = (root / q.img_path).resolve()
    if not path.is_relative_to(root):  # the warehouse's own paths only
        raise ApiError(404, "no_image", f"quote {quote_id}'s crop is outside the warehouse")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ApiError(404, "no_image", f"quote {quote_id}'s crop cannot be read: {exc.strerror}") from exc
    return Response(data, media_type=_image_type(data), headers={"Cache-Control": "private, max-age=3600"})


# -- documents ---------------------------------------------------------------------------------


def _document(server: Server, ident: str) -> DocumentInfo:
    """By doc_id, or by the scope rules (name with or without .pdf, any case, a doc_id prefix)."""
    snapshot = server.state.snapshot
    if ident in snapshot.documents:
        return snapshot.documents[ident]
    ref = snapshot.catalog.resolve(ident)  # UnknownDocument / RejectedDocument: 404 naming it
    return snapshot.documents[ref.doc_id]


def _document_json(doc: DocumentInfo) -> dict[str, Any]:
    return {"doc_id": doc.doc_id, "name": doc.name, "title": doc.title, "pages": doc.pages, "quotes": doc.quotes} | {
        "status": "ingested"
    }


@router.get("/v1/documents")
def documents(server: Reader) -> dict[str, Any]:
    snapshot = server.state.snapshot
    data = [_document_json(d) for d in snapshot.documents.values()]
    data += [
        {"doc_id": None, "name": file, "status": "rejected", "reason": reason}
        for file, reason in sorted(snapshot.catalog.rejected.values())
    ]
    data += [
        {"doc_id": j.doc_id, "name": j.name, "status": "ingesting", "job": server.jobs.describe(j)}
        for j in server.jobs.active()
    ]
    return {"object": "list", "data": data}


@router.get("/v1/documents/{ident}")
def document(ident: str, server: Reader) -> dict[str, Any]:
    return _document_json(_document(server, ident))


@router.get("/v1/documents/{ident}/pages/{number}.png")
async def page_image(
    ident: str,
    number: int,
    server: Reader,
    quote: Annotated[list[str] | None, Query()] = None,
    boxes: str | None = None,
) -> Response:
    """Page `number` (1-based) as PNG; the boxes of the quotes named by `quote` drawn on it, or of
    every quote on the page with `boxes=all`."""
    doc = _document(server, ident)
    if not 1 <= number <= doc.pages:
        raise ApiError(404, "no_such_page", f"{doc.name} has {doc.pages} pages; page {number} does not exist")
    page_idx = number - 1
    drawn: list[tuple[float, float, float, float]] = []
    for quote_id in quote or []:
        q = _quote(server, quote_id)
        if (q.doc_id, q.page_idx) != (doc.doc_id, page_idx):
            raise ApiError(422, "quote_elsewhere", f"quote {quote_id} is on {q.doc_id[:12]} page {q.page_idx + 1}")
        drawn.append(q.bbox)
    if boxes is not None:
        if boxes != "all":
            raise ApiError(422, "bad_boxes", "`boxes` takes one value: all")
        drawn += server.state.snapshot.boxes.get((doc.doc_id, page_idx), [])
    data = await server.in_worker(_render, server, doc, page_idx, tuple(drawn))
    return Response(data, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


def _render(server: Server, doc: DocumentInfo, page_idx: int, drawn: tuple[Any, ...]) -> bytes:
    from interleaf.render.pages import render_page

    dpi = server.api.page_dpi
    key = (doc.doc_id, page_idx, drawn, dpi)
    cached = server.state.pages.get(key)
    if cached is not None:
        return cached
    try:
        data = render_page(Path(doc.path), page_idx, dpi=dpi, boxes=drawn).data
    except OSError as exc:
        raise ApiError(404, "pdf_unreadable", f"{doc.name}: the PDF cannot be read any more: {exc}") from exc
    server.state.pages.put(key, data)
    return data


# -- uploads and jobs --------------------------------------------------------------------------


async def _read_capped(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "too_large", f"the request has {declared} bytes; uploads are limited to {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "too_large", f"the request is over the upload limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/v1/documents", status_code=202)
async def upload(request: Request, server: Writer, filename: str | None = None) -> JSONResponse:
    """A PDF as the raw body (`Content-Type: application/pdf`, name in `?filename=`) or as the
    `file` field of a multipart form."""
    limit = int(server.api.max_upload_mb * 1024 * 1024)
    body = await _read_capped(request, limit + 64 * 1024)  # room for a form's own bytes
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        data, filename = await _form_file(request, body)
    else:
        data = body
    try:
        job, started = server.jobs.submit(data, filename)
    except ApiError:
        raise
    except OSError as exc:
        raise api_error_of(exc) from exc
    status = 202 if started else 200
    return JSONResponse(server.jobs.describe(job), status_code=status, headers={"Location": f"/v1/jobs/{job.id}"})


async def _form_file(request: Request, body: bytes) -> tuple[bytes, str | None]:
    async def replay() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    form = await Request(request.scope, replay).form(max_files=1, max_fields=8)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ApiError(422, "no_file", "the form has no `file` field holding a PDF")
    return await upload.read(), upload.filename


@router.get("/v1/jobs/{job_id}")
def job(job_id: str, server: Reader) -> dict[str, Any]:
    found = server.jobs.get(job_id)
    if found is None:
        raise ApiError(404, "unknown_job", f"no upload job {job_id!r} (jobs are kept while the server runs)")
    return server.jobs.describe(found)
