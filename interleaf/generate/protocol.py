"""The generate stage's shared shapes: what a generator is given, what it returns, and what the
citation checker makes of it.

Numbering follows MMDocRAG (§3, Appendix E.3): text quotes and image quotes are numbered apart,
text quotes cited as `[i]`, image quotes placed as `![conclusion](imageN)`, both 1-based in
context order within their modality.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

Modality = Literal["text", "image"]
InputMode = Literal["text", "multimodal"]

# img_path (relative to the warehouse root) -> the crop's PNG bytes
ImageLoader = Callable[[str], bytes]


def relevance_order(score: float | None, position: int) -> tuple[bool, float, int]:
    """The sort key of a context read by relevance: the retrieval score, highest first; the given
    position breaking ties; a quote without a score (joined besides retrieval) last."""
    return (score is None, -(score or 0.0), position)


@dataclass(frozen=True)
class ContextQuote:
    """One quote of a retrieved context, as the generator and the renderer see it."""

    quote_id: str
    modality: Modality
    number: int  # 1-based within its modality: text [number], image image{number}
    doc_id: str
    doc_name: str
    page_idx: int  # 0-based
    kind: str  # text, title, table, figure, equation, ...
    text: str  # text quotes: the text; image quotes: their text form (VLM-text, else OCR-text, else caption)
    caption: str | None = None
    img_path: str | None = None  # image quotes: the crop, relative to the warehouse root
    bbox: tuple[float, float, float, float] | None = None  # PDF points, top-left origin
    ocr_text: str | None = None
    vlm_text: str | None = None
    doc_title: str | None = None  # the document's title (documents.title): what names the document, besides its file
    # the retrieval's score (contexts.score): how relevant retrieval found it, whatever the order the
    # context is given in; None for a quote joined to the context besides retrieval (item_count.py)
    score: float | None = None

    @property
    def label(self) -> str:
        """How the prompt names it: `[3]` or `image2`."""
        return f"[{self.number}]" if self.modality == "text" else f"image{self.number}"


@dataclass(frozen=True)
class AnswerRequest:
    question_id: str
    question: str
    quotes: tuple[ContextQuote, ...]  # context order (as retrieved, or shuffled when configured)
    clauses: tuple[str, ...] = ()  # the expanded query's clauses (clause 0 is the question)
    # every quote's text of the documents the question is asked about (doc scope), beyond its
    # context: what they never print, the question cannot be answered from; None in corpus scope
    documents_text: str | None = None
    # the pages of those documents the question names ("the chart on page 14"), as (doc_id, page_idx):
    # its answer is sought there; empty when it names none, and in corpus scope
    named_pages: frozenset[tuple[str, int]] = frozenset()
    # the kinds of float ("figure", "table") the parser found on those pages
    named_page_floats: frozenset[str] = frozenset()
    # a question counting its document's tables (figures): ("Table 3", quote id) for each one the
    # document numbers, those quotes in `quotes` (item_count.py); empty for any other question
    counted: tuple[tuple[str, str], ...] = ()
    # a question asking what its document's numbered parts are called ("the names of Lesson 1 and
    # Lesson 2"): ("Lesson 1", quote id) of the quote naming each, those quotes in `quotes`
    # (part_titles.py); empty for any other question
    named_parts: tuple[tuple[str, str], ...] = ()
    # a question counting the items its document lists under one name ("how many kettle drills are
    # included?"): (the item's title, quote id) for each, those quotes in `quotes` (listed_items.py)
    listed: tuple[tuple[str, str], ...] = ()
    # a question asking a ratio its name spells out ("the inventory to total equity ratio for
    # 2023") or a line item by its name ("what deferred revenue does Kestrel have for 2023?"): (the years'
    # line and the item's line as printed, quote id) of each statement line it is read from, those
    # quotes in `quotes` (statement_values.py); empty for any other question
    statement_lines: tuple[tuple[str, str], ...] = ()
    # (quote id, the id of the quote continuing it) for each quote of the context that ends in a
    # bulleted list the next page goes on with, those quotes in `quotes` (continued_lists.py)
    continued: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GeneratedAnswer:
    question_id: str
    markdown: str  # the answer as the model wrote it, reasoning stripped; "" on error
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    error: str | None = None  # set when no answer could be produced (server down, timeout, ...)
    server_failed: bool = False  # the error is the model server's (5xx, timeout, garbage): not stored as the answer
    input_mode: InputMode | None = None  # how image quotes reached the model (None: no model, offline)
    prompt_hashes: tuple[str, ...] = ()  # every prompt rendered for this answer, in the order used
    answerable: bool = True  # False: the generator abstained ("The documents do not say ...")
    abstain_reason: str | None = None  # why it abstained: the anchor no quote covers, the model's words
    # the value, name or list asked for, or "Not answerable" (MMLongBench-Doc scores it); None: not given
    short_answer: str | None = None


class Generator(Protocol):
    name: str  # offline, openai, transformers
    model: str | None
    input_mode: InputMode

    def prompt_hashes(self) -> list[str]:
        """Hashes of every prompt this generator renders (fingerprint and `answers.prompt_hash`)."""
        ...

    def version(self) -> dict[str, str]:
        """What it runs: model id, engine version; goes into the stage fingerprint."""
        ...

    def generate(self, requests: list[AnswerRequest], load_image: ImageLoader) -> list[GeneratedAnswer]:
        """One answer per request, in order. Per-request failures are GeneratedAnswer.error."""
        ...


# -- free-form chat, for judges, the two-step merge and knowledge extraction ---------------------


@dataclass(frozen=True)
class ChatRequest:
    user: str
    system: str | None = None
    images: tuple[bytes, ...] = ()  # PNG bytes, placed before the text
    max_tokens: int | None = None


@dataclass(frozen=True)
class ChatResult:
    text: str | None  # None on error
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0


class ChatModel(Protocol):
    """A model that answers free-form prompts (any generator backend but `offline`)."""

    name: str
    model: str | None

    def complete(self, requests: list[ChatRequest]) -> list[ChatResult]: ...


# -- citations, as checked --------------------------------------------------------------------


@dataclass(frozen=True)
class Citation:
    quote_id: str | None  # None: cites a quote that was not in the context (dropped, counted)
    modality: Modality
    number: int  # as written (after repair)
    supported: bool  # the sentence is backed by this quote (numbers, content words, similarity)
    reason: str  # why (un)supported: "numbers 12.5, 3 found", "content words 4/5", ...


@dataclass(frozen=True)
class CheckedSentence:
    index: int  # 0-based position in the answer
    text: str  # the sentence as shown, citations included
    citations: tuple[Citation, ...]
    supported: bool | None  # None: the sentence cites nothing
    # every value it states is in a quote it cites, under the labels it gives it (value_check.py)
    values_backed: bool = True


@dataclass(frozen=True)
class Verdict:
    """Relevance beside support: the answer addresses the question when each part of it is answered
    (by a sentence holding what the part asks, in itself or in the quotes it cites) or said missing."""

    addresses: bool
    said_missing: bool  # every part said missing: the answer abstains
    reason: str  # per part: "part 1 answered [2]; part 2 said missing"


@dataclass(frozen=True)
class CheckedAnswer:
    markdown: str  # repaired: every citation in canonical form, invalid ones removed
    sentences: tuple[CheckedSentence, ...]
    invalid: int  # citations of quotes not in the context, dropped
    repaired: int  # citations rewritten from a non-canonical form (`image 3`, `[image3]`, ...)
    cited_quote_ids: tuple[str, ...] = field(default_factory=tuple)  # in first-citation order, unique
    relevance: Verdict | None = None  # when the question was given to the checker
