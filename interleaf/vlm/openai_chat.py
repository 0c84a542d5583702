"""Chat requests to any OpenAI-compatible Chat Completions server (vLLM, SGLang, Ollama, hosted APIs).

Shared by the describer (VLM-text), the LMM filter (yes/no per image) and the generators (answers,
merges, judges). Images go as base64 PNG data URLs in `image_url` content parts. Requests run on a
thread pool (`concurrency`), each with a timeout and bounded retries with exponential backoff on
429, 5xx and transport errors; a reply that still fails carries its error, so the caller decides
what a failure means for its item. `on_token` streams the answer (SSE, `stream: true`).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from interleaf.errors import InterleafError
from interleaf.vlm.config import ChatServerConfig

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
# refusals that say nothing about the request itself: a wrong key, path or model name
CONFIG_STATUS = {401, 403, 404}

T = TypeVar("T")


class ServerUnreachableError(InterleafError):
    """Nothing answers at the configured base_url: every request of the run would fail the same way."""

    def __init__(self, base_url: str, reason: str, hint: str = "") -> None:
        super().__init__(f"no server answers at {base_url} ({reason}){': ' + hint if hint else ''}")
        self.base_url = base_url


class ModelServerError(InterleafError):
    """Requests the server failed (5xx, timeouts, a broken connection, a reply that is not a chat
    completion) after their retries. The failure is the server's, not the item's: a stage raises
    this rather than store it as the item's result, so a rerun once the server answers asks again."""

    def __init__(self, base_url: str, failed: int, total: int, first_error: str) -> None:
        super().__init__(
            f"the model server at {base_url} failed {failed} of {total} requests ({first_error}); "
            "nothing of them was stored: rerun once it answers"
        )
        self.base_url = base_url


@dataclass(frozen=True)
class ChatReply:
    text: str | None  # the assistant message's content ("" when the server sent none); None on error
    error: str | None = None
    tokens_in: int = 0  # the server's `usage`, 0 when it sent none
    tokens_out: int = 0
    reasoning: str | None = None  # `reasoning_content` (vLLM / SGLang reasoning parsers), apart from `text`
    unreachable: bool = False  # the last attempt could not connect at all
    # the error is the server's (see ModelServerError), not an answer about this request
    server_failed: bool = False


def check_reachable(endpoint: ChatServerConfig, hint: str = "") -> None:
    """Raise ServerUnreachableError when nothing accepts a TCP connection at base_url: one refused
    connection answers in milliseconds, where a run of requests would each retry with backoff first."""
    url = httpx.URL(endpoint.base_url)
    if urllib.request.getproxies() and not urllib.request.proxy_bypass(url.host):
        return  # reached through a proxy: a direct connection proves nothing
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.host, port), timeout=min(endpoint.timeout_s, 10.0)).close()
    except OSError as exc:
        raise ServerUnreachableError(endpoint.base_url, f"{type(exc).__name__}: {exc}", hint) from exc


def image_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def image_payload(model: str, png: bytes, text: str, max_tokens: int, temperature: float) -> dict[str, Any]:
    """A single user turn: the image first, then the instruction, as Qwen2.5-VL's model card orders them."""
    content = [{"type": "image_url", "image_url": {"url": image_data_url(png)}}, {"type": "text", "text": text}]
    return {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": temperature,
    }


def headers(endpoint: ChatServerConfig) -> dict[str, str]:
    # the key is read from the environment at call time, never stored in config or logs
    key = os.environ.get(endpoint.api_key_env)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _usage(body: dict[str, Any]) -> tuple[int, int]:
    usage = body.get("usage") or {}
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _read_reply(response: httpx.Response) -> ChatReply:
    try:
        body = response.json()
        message = body["choices"][0]["message"]
        text = message["content"] or ""
        # vLLM's reasoning parsers fill `reasoning_content` (newer releases: `reasoning`)
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        tokens_in, tokens_out = _usage(body)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return ChatReply(None, f"malformed response: {type(exc).__name__}: {exc}", server_failed=True)
    return ChatReply(text, None, tokens_in, tokens_out, reasoning)


class _StreamBroken(Exception):
    """The stream failed after tokens were shown: retrying would show them twice."""


def _read_stream(response: httpx.Response, on_token: Callable[[str], None]) -> ChatReply:
    """Server-sent events: `data: {chunk}` lines until `data: [DONE]`; the usage arrives in a last
    chunk with no choices (`stream_options.include_usage`)."""
    text: list[str] = []
    reasoning: list[str] = []
    tokens = (0, 0)
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # blank separators, `: keep-alive` comments, `event:` lines
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            tokens = _usage(chunk) if chunk.get("usage") else tokens
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content") or delta.get("reasoning"):
                    reasoning.append(delta.get("reasoning_content") or delta.get("reasoning"))
                if delta.get("content"):
                    text.append(delta["content"])
                    on_token(delta["content"])
        else:
            raise httpx.RemoteProtocolError("stream ended without data: [DONE]")
    except (httpx.TransportError, ValueError, TypeError, AttributeError) as exc:
        if text:
            raise _StreamBroken(f"stream broken after {len(text)} chunks: {type(exc).__name__}: {exc}") from exc
        raise
    return ChatReply("".join(text), None, *tokens, "".join(reasoning) or None)


def post_chat(
    client: httpx.Client,
    endpoint: ChatServerConfig,
    payload: dict[str, Any],
    on_token: Callable[[str], None] | None = None,
) -> ChatReply:
    """One chat completion with bounded retries; the reply's first choice's content, or an error.
    With `on_token`, the answer is streamed and each piece of content is passed to it as it comes."""
    url = endpoint.base_url.rstrip("/") + "/chat/completions"
    if on_token is not None:
        payload = payload | {"stream": True, "stream_options": {"include_usage": True}}
    error, unreachable = "no attempt", False
    for attempt in range(endpoint.retries + 1):
        if attempt:
            time.sleep(endpoint.backoff_s * 2 ** (attempt - 1))
        unreachable = False
        try:
            if on_token is None:
                response = client.post(url, json=payload, headers=headers(endpoint))
            else:
                with client.stream("POST", url, json=payload, headers=headers(endpoint)) as response:
                    if response.status_code == 200:
                        return _read_stream(response, on_token)
                    response.read()
        except _StreamBroken as exc:
            return ChatReply(None, str(exc), server_failed=True)
        except httpx.TimeoutException:
            error = f"timeout after {endpoint.timeout_s:g}s"
            continue
        except httpx.ConnectError as exc:
            error, unreachable = f"{type(exc).__name__}: {exc}", True
            continue
        except (httpx.TransportError, ValueError) as exc:  # ValueError: a stream chunk that is not JSON
            error = f"{type(exc).__name__}: {exc}"
            continue
        if response.status_code in RETRY_STATUS:
            error = f"HTTP {response.status_code}: {response.text[:200]}"
            continue
        if response.status_code != 200:  # 400, 401, 404...: retrying the same request cannot help
            failed = f"HTTP {response.status_code}: {response.text[:200]}"
            return ChatReply(None, failed, server_failed=response.status_code in CONFIG_STATUS)
        return _read_reply(response)
    attempts = f"{error} ({endpoint.retries + 1} attempts)"
    return ChatReply(None, attempts, unreachable=unreachable, server_failed=True)


def post_all(endpoint: ChatServerConfig, items: Sequence[T], payload: Callable[[T], dict[str, Any]]) -> list[ChatReply]:
    """One reply per item, in order. Payloads are built per request on the worker threads, so at
    most `concurrency` base64 images are held at once."""
    if not items:
        return []
    with (
        httpx.Client(timeout=endpoint.timeout_s) as client,
        ThreadPoolExecutor(max_workers=endpoint.concurrency) as pool,
    ):
        return list(pool.map(lambda item: post_chat(client, endpoint, payload(item)), items))
