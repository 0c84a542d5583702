"""Reasoning a model writes before its answer (`<think>…</think>` and the like), removed before the
answer is parsed for citations or a judge's verdict is read.

Three shapes occur: a whole block (`<think>…</think>answer`); only the closing tag, when the chat
template already opened the block in the prompt (Qwen3, DeepSeek-R1: `…reasoning…</think>answer`);
and an opening tag never closed, when the token budget ran out mid-thought: then there is no answer.
Servers with a reasoning parser send the reasoning apart (`reasoning_content`) and clean content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (opening, closing) pairs; <thinking> is RefLVQA's CoT tag (Appendix C.1), ◁think▷ Kimi's
TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("◁think▷", "◁/think▷"),
)
_BLOCKS = [re.compile(re.escape(o) + r".*?" + re.escape(c), re.S | re.I) for o, c in TAGS]


@dataclass(frozen=True)
class Stripped:
    answer: str
    reasoning: str  # what was removed, joined
    unfinished: bool  # an opened block never closed: the budget ran out while thinking


def strip_reasoning(text: str) -> Stripped:
    removed: list[str] = []
    for block in _BLOCKS:
        removed += block.findall(text)
        text = block.sub("", text)
    lowered = text.lower()
    for _opening, closing in TAGS:
        end = lowered.rfind(closing.lower())
        if end >= 0:  # opened by the chat template, in the prompt
            removed.append(text[: end + len(closing)])
            text, lowered = text[end + len(closing) :], lowered[end + len(closing) :]
    unfinished = False
    for opening, _closing in TAGS:
        start = lowered.find(opening.lower())
        if start >= 0:
            removed.append(text[start:])
            text, lowered, unfinished = text[:start], lowered[:start], True
    return Stripped(text.strip(), "\n".join(r.strip() for r in removed), unfinished)


class StreamFilter:
    """The visible part of a streamed answer, chunk by chunk: text inside a reasoning block is held
    back, and so is a chunk's tail that could be the start of a tag split across chunks."""

    def __init__(self) -> None:
        self._pending = ""
        self._closing: str | None = None  # inside a block: the tag that ends it

    def feed(self, chunk: str) -> str:
        self._pending += chunk
        shown: list[str] = []
        while self._pending:
            lowered = self._pending.lower()
            if self._closing is not None:
                end = lowered.find(self._closing)
                if end < 0:
                    self._pending = self._pending[-len(self._closing) :]  # a closing tag may be split
                    break
                self._pending = self._pending[end + len(self._closing) :]
                self._closing = None
                continue
            starts = [(lowered.find(o.lower()), o, c) for o, c in TAGS if o.lower() in lowered]
            if not starts:
                keep = self._partial_tag_length(lowered)
                shown.append(self._pending[: len(self._pending) - keep])
                self._pending = self._pending[len(self._pending) - keep :]
                break
            start, opening, closing = min(starts)
            shown.append(self._pending[:start])
            self._pending, self._closing = self._pending[start + len(opening) :], closing.lower()
        return "".join(shown)

    def flush(self) -> str:
        """What is still held back once the stream ends (a lone `<` was text after all)."""
        rest, self._pending = ("" if self._closing else self._pending), ""
        return rest

    @staticmethod
    def _partial_tag_length(lowered: str) -> int:
        """Length of the longest tail that is a proper prefix of an opening tag."""
        best = 0
        for opening, _ in TAGS:
            for size in range(1, len(opening)):
                if lowered.endswith(opening[:size].lower()):
                    best = max(best, size)
        return best
