"""VLM-text from any OpenAI-compatible Chat Completions server (vLLM, SGLang, Ollama, hosted APIs).

The request, its retries, timeouts and backoff are shared with the LMM filter
(`interleaf.vlm.openai_chat`). A request the server refuses (HTTP 400) or answers with nothing
becomes a rejects row for that quote; one the server failed (down, 5xx, timeout, a reply that is
not a chat completion) is marked so, and the describe stage stores nothing of the document.
"""

from __future__ import annotations

from typing import Any

from interleaf.describe.config import OpenAIConfig
from interleaf.describe.protocol import DescribeRequest, Description
from interleaf.prompts import Prompt
from interleaf.vlm.openai_chat import ChatReply, check_reachable, image_payload, post_all


class OpenAIDescriber:
    name = "openai"

    def __init__(self, config: OpenAIConfig, prompt: Prompt) -> None:
        self.config = config
        self.prompt = prompt
        self.model: str | None = config.model
        self.prompt_hash: str | None = prompt.hash

    def payload(self, request: DescribeRequest) -> dict[str, Any]:
        text = self.prompt.render(kind=request.kind, page=request.page_idx + 1, caption=request.caption or "(none)")
        return image_payload(self.config.model, request.png, text, self.config.max_tokens, self.config.temperature)

    @staticmethod
    def _description(reply: ChatReply) -> Description:
        if reply.text is None:
            return Description(None, (), reply.error, server_failed=reply.server_failed)
        text = reply.text.strip()
        return Description(text or None, ("image",), None if text else "empty output")

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        if requests:  # nothing listening: one refused connect says so, not every request after its retries
            check_reachable(self.config, "start it or set describe.openai.base_url")
        return [self._description(r) for r in post_all(self.config, requests, self.payload)]
