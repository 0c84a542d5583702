"""A real OpenAI-compatible Chat Completions server on loopback, for the VLM backends' tests.

It checks each request as the API defines it (path, bearer key, model, one user message with a
base64 PNG `image_url` part and a text part, plus the caller's own text checks) and answers in the
API's response shape. A script, consumed one entry per request in arrival order, makes it fail
or stall on purpose: "ok" (answer with `reply`), "500", "sleep" (1 s, then answer), "say:<text>".
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DATA_URL = "data:image/png;base64,"


class ChatServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        model: str,
        key: str,
        check_text: Callable[[str], list[str]],
        reply: Callable[[str, bytes], str],
    ) -> None:
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.model, self.key = model, key
        self.check_text = check_text  # the prompt text -> problems found in it
        self.reply = reply  # (prompt text, PNG bytes) -> the assistant's answer
        self.script: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.images: list[bytes] = []  # the decoded PNG of every well-formed request, in arrival order
        self.errors: list[str] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a timeout test hangs up before the answer: a broken pipe here is expected


class ChatHandler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _problems(self, body: dict[str, Any]) -> tuple[list[str], str, bytes]:
        problems = []
        if self.path != "/v1/chat/completions":
            problems.append(f"path {self.path}")
        if self.headers.get("Authorization") != f"Bearer {self.server.key}":
            problems.append("auth header")
        if body.get("model") != self.server.model:
            problems.append("model")
        (message,) = body["messages"]
        parts = {p["type"]: p for p in message["content"]}
        url = parts["image_url"]["image_url"]["url"]
        png = base64.b64decode(url[len(DATA_URL) :]) if url.startswith(DATA_URL) else b""
        if message["role"] != "user" or not png.startswith(PNG_MAGIC):
            problems.append("image data URL")
        text = parts["text"]["text"]
        return problems + self.server.check_text(text), text, png

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
            action = self.server.script.pop(0) if self.server.script else "ok"
        problems, text, png = self._problems(body)
        if problems:
            with self.server.lock:
                self.server.errors.extend(problems)
            self._reply(400, {"error": {"message": ", ".join(problems), "type": "invalid_request_error"}})
            return
        with self.server.lock:
            self.server.images.append(png)
        if action == "500":
            self._reply(500, {"error": {"message": "overloaded", "type": "server_error"}})
            return
        if action == "sleep":
            threading.Event().wait(1.0)
        content = action[len("say:") :] if action.startswith("say:") else self.server.reply(text, png)
        self._reply(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )


@contextmanager
def running(server: ChatServer) -> Iterator[ChatServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
