"""A real OpenAI-compatible server on loopback for the generators' tests and the `vllm` stand-in.

It checks each request as the Chat Completions API defines it (path, bearer key, JSON body with
known fields only, model, messages with system / user / assistant roles whose content is a string
or text and `image_url` parts, images as base64 PNG data URLs and only where allowed, a positive
integer max_tokens, temperature in [0, 2], stream / stream_options) and answers in the API's shape:
a `chat.completion`, or with `stream: true` server-sent `chat.completion.chunk` events ending with
`data: [DONE]` (and a usage chunk when `stream_options.include_usage`). GET /v1/models lists the model.

A script, consumed one entry per chat request in arrival order, makes it fail or stall on purpose:
"ok" (answer with `reply`), "500", "sleep" (1 s, then answer), "say:<text>", and two garbage
answers with status 200: "garbage" (a body that is not JSON) and "shape" (JSON that is not a
chat completion).
Usage counts words: prompt_tokens = the words of every text part plus 100 per image,
completion_tokens = the words of the answer (reasoning included), so tests can work them out.
With `usage` set False it sends none, as some OpenAI-compatible servers do.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DATA_URL = "data:image/png;base64,"
IMAGE_TOKENS = 100
FIELDS = {
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "seed",
    "stream",
    "stream_options",
    "chat_template_kwargs",  # vLLM / SGLang extension
}


@dataclass(frozen=True)
class Reply:
    content: str
    reasoning: str | None = None  # sent apart as `reasoning_content`, as vLLM's reasoning parsers do


@dataclass(frozen=True)
class Seen:
    """A well-formed request as the server understood it."""

    body: dict[str, Any]
    texts: list[str]  # every text part or string content, in order
    images: list[bytes]  # every decoded PNG, in order

    @property
    def prompt(self) -> str:
        return "\n".join(self.texts)


def words(text: str) -> int:
    return len(text.split())


class OpenAIServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        model: str,
        key: str | None,
        reply: Callable[[Seen], str | Reply],
        allow_images: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__((host, port), Handler)
        self.model, self.key = model, key
        self.reply = reply
        self.allow_images = allow_images
        self.script: list[str] = []
        self.seen: list[Seen] = []
        self.errors: list[str] = []
        self.usage = True  # whether answers carry `usage`
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a timeout test hangs up before the answer: a broken pipe here is expected


def _decode(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:
        return b""


def _content_problems(content: Any, allow_images: bool, texts: list[str], images: list[bytes]) -> list[str]:
    if isinstance(content, str):
        texts.append(content)
        return []
    if not isinstance(content, list) or not content:
        return ["content is neither a string nor a list of parts"]
    problems = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str) and set(part) == {"type", "text"}:
            texts.append(part["text"])
        elif kind == "image_url" and set(part) == {"type", "image_url"}:
            url = part["image_url"].get("url", "") if isinstance(part["image_url"], dict) else ""
            png = _decode(url[len(DATA_URL) :]) if url.startswith(DATA_URL) else b""
            if not png.startswith(PNG_MAGIC):
                problems.append("image_url is not a base64 PNG data URL")
            elif not allow_images:
                problems.append("image_url part in a text-only request")
            images.append(png)
        else:
            problems.append(f"malformed content part {str(part)[:80]}")
    return problems


def request_problems(server: OpenAIServer, path: str, headers: Any, body: Any) -> tuple[list[str], Seen | None]:
    if path != "/v1/chat/completions":
        return [f"path {path}"], None
    problems = []
    if server.key is not None and headers.get("Authorization") != f"Bearer {server.key}":
        problems.append("bearer key")
    if not (headers.get("Content-Type") or "").startswith("application/json"):
        problems.append("content type")
    if not isinstance(body, dict):
        return [*problems, "body is not a JSON object"], None
    if unknown := sorted(set(body) - FIELDS):
        problems.append(f"unknown fields {unknown}")
    if body.get("model") != server.model:
        problems.append(f"model {body.get('model')!r}")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        problems.append(f"max_tokens {max_tokens!r}")
    temperature = body.get("temperature", 1.0)
    if not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        problems.append(f"temperature {temperature!r}")
    if not isinstance(body.get("stream", False), bool):
        problems.append("stream is not a boolean")
    if "stream_options" in body and (
        body.get("stream") is not True or set(body["stream_options"]) != {"include_usage"}
    ):
        problems.append("stream_options without stream, or unknown options")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages"], None
    texts: list[str] = []
    images: list[bytes] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in {"system", "user", "assistant"}:
            problems.append(f"message {i}: role")
            continue
        if set(message) - {"role", "content", "name"}:
            problems.append(f"message {i}: unknown keys")
        if message["role"] == "system" and not isinstance(message.get("content"), str | list):
            problems.append(f"message {i}: system content")
        problems += [
            f"message {i}: {p}" for p in _content_problems(message.get("content"), server.allow_images, texts, images)
        ]
    if messages[-1].get("role") != "user":
        problems.append("the last message is not the user's")
    return problems, Seen(body, texts, images)


class Handler(BaseHTTPRequestHandler):
    server: OpenAIServer

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._raw(status, "application/json", json.dumps(body).encode())

    def _raw(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        self._json(200, {"object": "list", "data": [{"id": self.server.model, "object": "model", "owned_by": "test"}]})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self.server.lock:
            action = self.server.script.pop(0) if self.server.script else "ok"
        problems, seen = request_problems(self.server, self.path, self.headers, body)
        if problems or seen is None:
            with self.server.lock:
                self.server.errors.extend(problems)
            self._json(400, {"error": {"message": ", ".join(problems), "type": "invalid_request_error"}})
            return
        with self.server.lock:
            self.server.seen.append(seen)
        if action == "500":
            self._json(500, {"error": {"message": "overloaded", "type": "server_error"}})
            return
        if action == "garbage":
            self._raw(200, "text/html", b"<html><body>502 Bad Gateway</body></html>")
            return
        if action == "shape":
            self._json(200, {"object": "list", "data": [], "detail": "not a chat completion"})
            return
        if action == "sleep":
            threading.Event().wait(1.0)
        answer = Reply(action[len("say:") :]) if action.startswith("say:") else self.server.reply(seen)
        answer = answer if isinstance(answer, Reply) else Reply(answer)
        usage = {
            "prompt_tokens": sum(words(t) for t in seen.texts) + IMAGE_TOKENS * len(seen.images),
            "completion_tokens": words(answer.content) + words(answer.reasoning or ""),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if seen.body.get("stream"):
            self._stream(seen, answer, usage)
            return
        message = {"role": "assistant", "content": answer.content}
        if answer.reasoning:
            message["reasoning_content"] = answer.reasoning
        self._json(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": self.server.model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
            | ({"usage": usage} if self.server.usage else {}),
        )

    def _stream(self, seen: Seen, answer: Reply, usage: dict[str, int]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": self.server.model}
            self.wfile.write(f"data: {json.dumps(chunk | {'choices': choices} | extra)}\n\n".encode())
            self.wfile.flush()

        event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for piece in pieces(answer.reasoning or ""):
            event([{"index": 0, "delta": {"reasoning_content": piece}, "finish_reason": None}])
        for piece in pieces(answer.content):
            event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
        event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        if (seen.body.get("stream_options") or {}).get("include_usage") and self.server.usage:
            event([], usage=usage)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def pieces(text: str, size: int = 5) -> list[str]:
    """A text cut as a tokenizer might stream it: short pieces, tags split across them."""
    return [text[i : i + size] for i in range(0, len(text), size)]


@contextmanager
def running(server: OpenAIServer) -> Iterator[OpenAIServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
