"""The retrieve stage's swappable parts: a Reranker scores (query, passage) pairs; an ImageFilter
judges whether an image quote can answer the question (V-RAG's LMM filter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: list[str]) -> list[float]:
        """Higher is more relevant; one score per passage."""
        ...


@dataclass(frozen=True)
class FilterRequest:
    """One image candidate: its quote and the crop's PNG bytes."""

    quote_id: str
    png: bytes


@dataclass(frozen=True)
class Verdict:
    quote_id: str
    keep: bool | None  # the model's yes (True) / no (False); None when the call failed or the answer is unreadable
    p_yes: float | None = None  # P(yes) where the backend reads one (transformers); None otherwise
    error: str | None = None


class ImageFilter(Protocol):
    name: str  # transformers, openai
    model: str | None
    prompt_hash: str

    def judge(self, question: str, images: list[FilterRequest]) -> list[Verdict]:
        """One Verdict per image, in order. Failures are per item (keep None, Verdict.error)."""
        ...
