"""The LMM filter on any OpenAI-compatible server (dochaystack-vrag §4 LMM-filter module).

Each (question, image) pair is one chat completion at temperature 0 with a few tokens to answer;
the answer's first word decides: yes keeps the image, no removes it. Anything else, and any call
that fails after its retries, is a verdict of None with the reason, which the stage keeps.
"""

from __future__ import annotations

import string
from typing import Any

from interleaf.prompts import Prompt
from interleaf.retrieve.config import FilterOpenAIConfig
from interleaf.retrieve.protocol import FilterRequest, Verdict
from interleaf.vlm.openai_chat import ChatReply, image_payload, post_all


def parse_answer(text: str) -> bool | None:
    """yes -> True, no -> False, from the first word, case-insensitive, punctuation stripped
    ("Yes.", "**No**", "yes, it shows..."); None for anything else."""
    words = text.split()
    first = words[0].strip(string.punctuation).lower() if words else ""
    return {"yes": True, "no": False}.get(first)


class OpenAIImageFilter:
    name = "openai"

    def __init__(self, config: FilterOpenAIConfig, prompt: Prompt) -> None:
        self.config = config
        self.prompt = prompt
        self.model: str | None = config.model
        self.prompt_hash: str = prompt.hash

    def _verdict(self, request: FilterRequest, reply: ChatReply) -> Verdict:
        if reply.text is None:
            return Verdict(request.quote_id, None, None, reply.error)
        keep = parse_answer(reply.text)
        error = None if keep is not None else f"unparseable answer: {reply.text.strip()[:100]!r}"
        return Verdict(request.quote_id, keep, None, error)

    def judge(self, question: str, images: list[FilterRequest]) -> list[Verdict]:
        text = self.prompt.render(question=question)
        c = self.config

        def payload(request: FilterRequest) -> dict[str, Any]:
            return image_payload(c.model, request.png, text, c.max_tokens, c.temperature)

        replies = post_all(c, images, payload)
        return [self._verdict(r, reply) for r, reply in zip(images, replies, strict=True)]
