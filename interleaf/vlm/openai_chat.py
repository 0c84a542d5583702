"""One image and a text to any OpenAI-compatible Chat Completions server (vLLM, SGLang, Ollama, hosted APIs).

Shared by the describer (VLM-text) and the LMM filter (yes/no per image). Images go as base64 PNG
data URLs in `image_url` content parts. Requests run on a thread pool (`concurrency`), each with
a timeout and bounded retries with exponential backoff on 429, 5xx and transport errors; a reply
that still fails carries its error, so the caller decides what a failure means for its item.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from interleaf.vlm.config import ChatServerConfig

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}

T = TypeVar("T")


@dataclass(frozen=True)
class ChatReply:
    text: str | None  # the assistant message's content ("" when the server sent none); None on error
    error: str | None = None


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


def post_chat(client: httpx.Client, endpoint: ChatServerConfig, payload: dict[str, Any]) -> ChatReply:
    """One chat completion with bounded retries; the reply's first choice's content, or an error."""
    url = endpoint.base_url.rstrip("/") + "/chat/completions"
    error = "no attempt"
    for attempt in range(endpoint.retries + 1):
        if attempt:
            time.sleep(endpoint.backoff_s * 2 ** (attempt - 1))
        try:
            response = client.post(url, json=payload, headers=headers(endpoint))
        except httpx.TimeoutException:
            error = f"timeout after {endpoint.timeout_s:g}s"
            continue
        except httpx.TransportError as exc:
            error = f"{type(exc).__name__}: {exc}"
            continue
        if response.status_code in RETRY_STATUS:
            error = f"HTTP {response.status_code}: {response.text[:200]}"
            continue
        if response.status_code != 200:  # 400, 401, 404...: retrying the same request cannot help
            return ChatReply(None, f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            text = response.json()["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            return ChatReply(None, f"malformed response: {exc}")
        return ChatReply(text)
    return ChatReply(None, f"{error} ({endpoint.retries + 1} attempts)")


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
