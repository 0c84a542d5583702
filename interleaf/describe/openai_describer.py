"""VLM-text from any OpenAI-compatible Chat Completions server (vLLM, SGLang, Ollama, hosted APIs).

Images go as base64 data URLs in `image_url` content parts. Requests run on a thread pool
(`concurrency`), each with a timeout and bounded retries with exponential backoff on 429, 5xx
and transport errors; whatever still fails becomes a rejects row for that quote.
"""

from __future__ import annotations

import base64
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from interleaf.describe.config import OpenAIConfig
from interleaf.describe.protocol import DescribeRequest, Description
from interleaf.prompts import Prompt

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAIDescriber:
    name = "openai"
    code_version = "openai-1"

    def __init__(self, config: OpenAIConfig, prompt: Prompt) -> None:
        self.config = config
        self.prompt = prompt
        self.model: str | None = config.model
        self.prompt_hash: str | None = prompt.hash

    def payload(self, request: DescribeRequest) -> dict[str, Any]:
        text = self.prompt.render(kind=request.kind, page=request.page_idx + 1, caption=request.caption or "(none)")
        url = "data:image/png;base64," + base64.b64encode(request.png).decode()
        return {
            "model": self.config.model,
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}],
                }
            ],
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
        }

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.config.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _one(self, client: httpx.Client, request: DescribeRequest) -> Description:
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        error = "no attempt"
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(self.config.backoff_s * 2 ** (attempt - 1))
            try:
                response = client.post(url, json=self.payload(request), headers=self._headers())
            except httpx.TimeoutException:
                error = f"timeout after {self.config.timeout_s:g}s"
                continue
            except httpx.TransportError as exc:
                error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUS:
                error = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                return Description(None, (), f"HTTP {response.status_code}: {response.text[:200]}")
            try:
                text = response.json()["choices"][0]["message"]["content"] or ""
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                return Description(None, (), f"malformed response: {exc}")
            return Description(text.strip() or None, ("image",), None if text.strip() else "empty output")
        return Description(None, (), f"{error} ({self.config.retries + 1} attempts)")

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        if not requests:
            return []
        with (
            httpx.Client(timeout=self.config.timeout_s) as client,
            ThreadPoolExecutor(max_workers=self.config.concurrency) as pool,
        ):
            return list(pool.map(lambda r: self._one(client, r), requests))
