"""The expand stage's swappable part: an Expander turns a question into clauses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Clause:
    text: str
    kind: str  # question, part, keywords, reference, prf, llm
    weight: float


class Expander(Protocol):
    name: str

    def expand(self, question: str) -> list[Clause]: ...
