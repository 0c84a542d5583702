"""OpenAI's Chat Completions API over Interleaf: any OpenAI client can ask the documents.

The last user message is the question; earlier user turns (`serve.api.context_turns` of them) are
given to query expansion as context. The assistant message is the interleaved Markdown answer with
its images as URLs of this server. The citations come as data beside it, in a top-level `citations`
field (and `interleaf`: abstention, relevance, timing) that OpenAI's clients keep as an extra field
and otherwise ignore. With `stream: true` the answer arrives as `chat.completion.chunk` events; the
last chunk carries the citations. Interleaf's own options ride along as extra body fields:
`documents`, `scope`, `budget`. Sampling options (temperature, max_tokens, ...) are accepted and
do not apply: the configured generator decides.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from interleaf.serve.answering import Answered, Ask, Urls, answer, citations, markdown, prepare
from interleaf.serve.app import Server
from interleaf.serve.errors import ApiError
from interleaf.serve.routes import Reader, urls_of
from interleaf.serve.streaming import SSE_HEADERS, Done, Failed, Token, answer_events

router = APIRouter()
OWN_MODEL = "interleaf"
_SENTENCE_END = re.compile(r"(?<=[.!?)\]])\s+")


def model_names(server: Server) -> list[str]:
    return list(dict.fromkeys([server.api.model_name, OWN_MODEL]))


@router.get("/v1/models")
def models(server: Reader) -> dict[str, Any]:
    created = int(server.state.loaded_at or time.time())
    data = [
        {"id": name, "object": "model", "created": created, "owned_by": "interleaf"} for name in model_names(server)
    ]
    return {"object": "list", "data": data}


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI's other options: accepted, not applied

    model: str
    messages: list[dict[str, Any]]
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    documents: list[str] = []  # Interleaf: the documents asked about (extra_body)
    scope: str | None = None
    budget: int | None = None


def _text(message: dict[str, Any], position: int) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise ApiError(
                    422, "unsupported_content", f"messages[{position}]: only text parts are read, not {kind}"
                )
            texts.append(str(part.get("text", "")))
        return "\n".join(texts)
    raise ApiError(422, "invalid_request", f"messages[{position}].content must be a string or a list of parts")


def question_and_context(messages: list[dict[str, Any]], turns: int) -> tuple[str, str | None]:
    """The last user message, and the user turns before it (the latest first) for expansion."""
    if not messages:
        raise ApiError(422, "invalid_request", "`messages` is empty: the last one must be the user's question")
    roles = {"system", "user", "assistant", "developer", "tool"}
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in roles:
            raise ApiError(422, "invalid_request", f"messages[{i}] needs a role of {', '.join(sorted(roles))}")
    if messages[-1]["role"] != "user":
        raise ApiError(422, "invalid_request", "the last message must be the user's question")
    question = _text(messages[-1], len(messages) - 1)
    earlier = [_text(m, i) for i, m in enumerate(messages[:-1]) if m["role"] == "user"]
    context = " ".join(t for t in reversed(earlier[-turns:]) if t.strip()) if turns else ""
    return question, context or None


@router.post("/v1/chat/completions", response_model=None)
async def chat(body: ChatBody, request: Request, server: Reader) -> Any:
    if body.model not in model_names(server):
        raise ApiError(404, "model_not_found", f"no model {body.model!r}; this server answers as {model_names(server)}")
    question, context = question_and_context(body.messages, server.api.context_turns)
    ask = prepare(server.state, question, body.documents, body.scope, body.budget, context)
    urls = urls_of(request)
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not body.stream:
        answered = await server.in_worker(answer, server.state, ask)
        return completion(answered, urls, body.model, completion_id)
    usage = bool((body.stream_options or {}).get("include_usage"))
    return StreamingResponse(
        _chunks(server, ask, urls, body.model, completion_id, usage),
        media_type="text/event-stream",
        headers=SSE_HEADERS,
    )


def _extras(answered: Answered, urls: Urls) -> dict[str, Any]:
    row = answered.row
    return {
        "citations": citations(answered.view, urls),
        "interleaf": {
            "question": answered.view.question,
            "scope": answered.ask.scope,
            "documents": [{"doc_id": d.doc_id, "name": d.name} for d in answered.ask.documents],
            "answerable": row.get("answerable", True),
            "abstain_reason": row.get("abstain_reason"),
            "addresses_question": row.get("addresses_question"),
            "relevance_reason": row.get("relevance_reason"),
            "qset_id": answered.qset_id,
            "seconds": round(answered.seconds, 4),
        },
    }


def _usage(answered: Answered) -> dict[str, int] | None:
    """The tokens the generator's model counted for this answer (a stored answer: when it was made),
    or None where none are known, and then the API's optional `usage` is left out rather than given
    as zeros: the offline composer runs no model, and a model server that sends no `usage` is stored
    as 0 tokens in, which no model call that read a prompt can be."""
    row = answered.row
    prompt, completion_tokens = int(row.get("tokens_in") or 0), int(row.get("tokens_out") or 0)
    if row.get("generator") == "offline" or prompt == 0:
        return None
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens, "total_tokens": prompt + completion_tokens}


def completion(answered: Answered, urls: Urls, model: str, completion_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": markdown(answered.view, urls)},
                "finish_reason": "stop",
            }
        ],
    }
    if usage := _usage(answered):
        body["usage"] = usage
    return body | _extras(answered, urls)


def _chunk(completion_id: str, model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


async def _chunks(
    server: Server, ask: Ask, urls: Urls, model: str, completion_id: str, usage: bool
) -> AsyncIterator[str]:
    import json

    def event(data: dict[str, Any]) -> str:
        if usage and data.get("object") == "chat.completion.chunk":
            data = {"usage": None} | data  # with include_usage, only the last chunk's is not null
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield event(_chunk(completion_id, model, {"role": "assistant", "content": ""}))
    streamed = False
    async for item in answer_events(server, ask, urls):
        if isinstance(item, Token):
            streamed = True
            yield event(_chunk(completion_id, model, {"content": item.text}))
        elif isinstance(item, Failed):
            yield event({"error": {"message": item.error.message, "type": item.error.kind, "code": item.error.status}})
        elif isinstance(item, Done):
            answered = item.answered
            if not streamed:  # a generator that does not stream (the offline composer): sentence by sentence
                for piece in _pieces(markdown(answered.view, urls)):
                    yield event(_chunk(completion_id, model, {"content": piece}))
            yield event(_chunk(completion_id, model, {}, "stop") | _extras(answered, urls))
            counted = _usage(answered)
            if usage and counted:  # no counts: no usage chunk, as a client sees when a stream breaks off
                yield event(_chunk(completion_id, model, {}) | {"choices": [], "usage": counted})
    yield "data: [DONE]\n\n"


def _pieces(text: str) -> list[str]:
    """The text cut after each sentence, the spaces kept, so the pieces join back to the text."""
    out, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        out.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out
