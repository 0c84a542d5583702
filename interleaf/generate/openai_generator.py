"""Answers from any OpenAI-compatible Chat Completions server: `vllm serve Qwen/Qwen2.5-VL-7B-Instruct`,
SGLang, Ollama, a hosted API.

The HTTP call, its timeout, bounded retries with backoff and SSE streaming are shared with the
describer and the LMM filter (`interleaf.vlm.openai_chat`). Pure-text input sends every message as a
string; multimodal input sends the crops as base64 PNG `image_url` parts.

Failures: a request that still fails after its retries (HTTP 500, timeout, 400 for an image sent to a
text-only model) becomes that answer's `error`, and the other answers go on; one the server failed
(5xx, timeout, a reply that is not a chat completion) is marked `server_failed`, and the generate
stage stores no answers of the question set (a rerun asks again once the server answers). A server that cannot be
reached at all raises ServerUnreachableError naming base_url before any request is sent (one TCP
connect, so a question set never turns into a list of empty answers after minutes of backoff), and
again when every request of a batch failed to connect (the server went away mid-run).

Thinking (`generate.thinking`): on / off go as `chat_template_kwargs: {enable_thinking: …}`, which
vLLM and SGLang pass to the model's chat template (Qwen3-style); a server or template without the
switch ignores it. Reasoning the server sends apart (`reasoning_content`) never enters the answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from interleaf.generate.config import GenerateConfig, GenerateOpenAIConfig
from interleaf.generate.prompting import Conversation, Message
from interleaf.generate.protocol import InputMode
from interleaf.generate.strategies import Completion, ModelGenerator, TokenCallback
from interleaf.vlm.openai_chat import ServerUnreachableError, check_reachable, image_data_url, post_chat


def message_json(message: Message) -> dict[str, Any]:
    """A message as the API defines it: a string when it holds text only, else content parts."""
    if not message.images:
        return {"role": message.role, "content": message.text}
    parts = [
        {"type": "image_url", "image_url": {"url": image_data_url(p)}}
        if isinstance(p, bytes)
        else {"type": "text", "text": p}
        for p in message.content
    ]
    return {"role": message.role, "content": parts}


class OpenAIChat:
    """The backend the strategies call: conversations to chat completions, `concurrency` at a time."""

    name = "openai"

    def __init__(self, settings: GenerateOpenAIConfig, thinking: str = "default") -> None:
        self.settings = settings
        self.thinking = thinking
        self.model = settings.model

    def check_input(self, input_mode: InputMode) -> None:
        """A server's model cannot be asked whether it reads images; a text-only one answers each
        multimodal request with an HTTP 400, recorded as that answer's error."""

    def payload(self, conversation: Conversation, max_tokens: int | None) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": [message_json(m) for m in conversation],
            "max_tokens": max_tokens or s.max_tokens,
            "temperature": s.temperature,
        }
        if self.thinking != "default":
            body["chat_template_kwargs"] = {"enable_thinking": self.thinking == "on"}
        return body

    def version(self) -> dict[str, str]:
        return {"backend": "openai", "model": self.model, "thinking": self.thinking}

    def _hint(self) -> str:
        port = httpx.URL(self.settings.base_url).port or 8000
        return f"start one (`vllm serve {self.model} --host 127.0.0.1 --port {port}`) or set generate.openai.base_url"

    def chat(
        self,
        conversations: Sequence[Conversation],
        max_tokens: int | None = None,
        on_token: TokenCallback | None = None,
    ) -> list[Completion]:
        if not conversations:
            return []
        s = self.settings
        check_reachable(s, self._hint())

        def one(conversation: Conversation) -> tuple[Completion, bool]:
            started = time.perf_counter()
            reply = post_chat(client, s, self.payload(conversation, max_tokens), on_token)
            seconds = time.perf_counter() - started
            completion = Completion(
                reply.text, reply.error, reply.tokens_in, reply.tokens_out, seconds, reply.server_failed
            )
            return completion, reply.unreachable

        # streamed answers go one at a time, or their tokens would interleave on the terminal
        workers = 1 if on_token else s.concurrency
        with httpx.Client(timeout=s.timeout_s) as client, ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, conversations))
        if all(unreachable for _, unreachable in results):
            raise ServerUnreachableError(s.base_url, f"every request failed: {results[0][0].error}", self._hint())
        return [completion for completion, _ in results]


class OpenAIGenerator(ModelGenerator):
    """Generator and ChatModel over an OpenAI-compatible server."""

    def __init__(self, config: GenerateConfig, on_token: TokenCallback | None = None) -> None:
        super().__init__(config, OpenAIChat(config.openai, config.thinking), on_token)
