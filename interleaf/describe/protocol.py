"""The describe stage's swappable part: a Describer writes VLM-text (OCR engines: interleaf.pdf.ocr)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class DescribeRequest:
    """Everything a describer may use about one image quote."""

    quote_id: str
    kind: str  # figure, table, equation
    page_idx: int
    png: bytes
    caption: str | None = None
    ocr_text: str | None = None
    ocr_source: str | None = None
    table_md: str | None = None
    references: tuple[str, ...] = ()  # sentences of the document that refer to this quote


@dataclass(frozen=True)
class Description:
    text: str | None
    sources: tuple[str, ...] = ()  # what it was built from: image, caption, ocr_text, table_md, references
    error: str | None = None  # why there is no text; becomes a rejects row
    server_failed: bool = False  # the error is the model server's: the stage fails, nothing is stored


class Describer(Protocol):
    name: str  # offline, transformers, openai
    model: str | None
    prompt_hash: str | None

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        """One Description per request, in order. Failures are per item (Description.error)."""
        ...
