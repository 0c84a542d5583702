"""The retrieve stage's swappable part: a Reranker scores (query, passage) pairs."""

from __future__ import annotations

from typing import Protocol


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: list[str]) -> list[float]:
        """Higher is more relevant; one score per passage."""
        ...
