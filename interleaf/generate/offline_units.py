"""The offline composer's candidate sentences: what each context quote offers to be copied.

A text quote offers its sentences. An image quote offers its caption's sentences, its table's rows
(each read with its column headers), the prose a describer wrote about it (VLM-text) and, for a
figure without a table, the lines of its OCR-text. Each candidate keeps its quote, so whatever is
copied is cited to where it came from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from interleaf.evidence import fold
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.sentences import (
    TEXT_MARK,
    TableRow,
    content_words,
    dehyphenate,
    numbers_in,
    split_prose,
    table_rows,
)

UnitKind = Literal["sentence", "caption", "row", "ocr"]

# "Table 2", "Figure 4-69", "Example 2-1": a label an image quote's caption starts with.
LABEL = re.compile(
    r"\b(?:Table|Figure|Fig\.?|Chart|Example|Equation|Eq\.?|Listing|Exhibit|Diagram)\s*[0-9IVX]+(?:[.\-–][0-9]+)*\b",
    re.I,
)
LEAD_IN = re.compile(r"^[A-Z][\w ]{0,30}:\s+")  # "Caption: ", "Text in the figure: "
_MARK_WORD = re.compile(r"\b(image|quote)(\s*#?\s*\d)", re.I)
_QUOTED_LINE = re.compile(r"^[^:“\"]{0,40}:\s*(?=[“\"])")  # `The document says about it: “...”`
_BRACKETED = re.compile(r"^\s*\[.*\]\s*$")


@dataclass(frozen=True)
class Unit:
    """A candidate sentence: one sentence of a quote, one caption sentence, one table row."""

    quote: ContextQuote
    text: str  # as written in the answer, before its citation
    kind: UnitKind
    position: int  # order within its quote
    words: frozenset[str]
    numbers: tuple[str, ...]
    row: TableRow | None = None


def image_labels(quotes: Sequence[ContextQuote]) -> dict[str, str]:
    """quote_id -> `Table 2`, `Figure 4-68` for the image quotes whose label is known: the label
    their caption starts with, else one on a line of their own text (a caption the parser left
    inside the figure), else the label of a caption the parser made a text quote of, when it sits
    on the same page as exactly one unlabelled image quote of its kind."""
    labels = {q.quote_id: label for q in quotes if q.modality == "image" and (label := own_label(q))}
    for t in quotes:
        m = LABEL.match(t.text.strip()) if t.modality == "text" else None
        if m is None or not re.match(r"[:.]", t.text.strip()[m.end() :]):
            continue  # a caption reads "Table 5: ..." or "Figure 3. ..."; "Table 5 shows ..." is prose
        kind = kind_of_label(m.group(0))
        orphans = [
            q
            for q in quotes
            if q.modality == "image"
            and q.page_idx == t.page_idx
            and q.doc_id == t.doc_id
            and q.quote_id not in labels
            and kind_of_label(q.kind) == kind
        ]
        if len(orphans) == 1:
            labels[orphans[0].quote_id] = re.sub(r"\s+", " ", m.group(0))
    return labels


def own_label(quote: ContextQuote) -> str | None:
    """The label an image quote's own text gives: its caption's, or a line of its OCR- or VLM-text."""
    lines = [line.strip() for text in (quote.caption, quote.ocr_text, quote.text) for line in (text or "").splitlines()]
    found = next((m for m in map(LABEL.match, lines) if m), None)
    return re.sub(r"\s+", " ", found.group(0)) if found else None


def kind_of_label(label: str) -> str:
    return fold(label).split()[0].rstrip(".")[:3] if label.strip() else ""  # "tab", "fig", "exa"


def where(quote: ContextQuote) -> str:
    """How the answer names an image quote's place: `Table 2 (page 4)`. Only a label the quote itself
    states: one paired from a separate caption quote would be a claim its citation does not back."""
    label = own_label(quote)
    page = f"page {quote.page_idx + 1}"
    return f"{label} ({page})" if label else f"The {quote.kind} on {page}"


def units_of(quote: ContextQuote) -> list[Unit]:
    texts: list[tuple[str, UnitKind, TableRow | None]] = []
    if quote.modality == "text":
        texts = [(s, "sentence", None) for s in split_prose(dehyphenate(quote.text))]
    else:
        caption = dehyphenate(quote.caption or "")
        texts += [(s, "caption", None) for s in split_prose(caption)]
        rows = next((r for r in (table_rows(t or "") for t in (quote.text, quote.vlm_text, quote.ocr_text)) if r), [])
        texts += [(row.as_text(), "row", row) for row in rows]
        texts += [(s, "sentence", None) for s in _description_sentences(quote)]
        if not rows:
            ocr = [line.strip() for line in (quote.ocr_text or "").splitlines() if len(line.split()) >= 2]
            kind: UnitKind = "row" if quote.kind == "table" else "ocr"
            texts += [(line, kind, None) for line in ocr]
    out = []
    for i, (text, kind, row) in enumerate(texts):
        text = escape_marks(text)
        out.append(Unit(quote, text, kind, i, frozenset(content_words(text)), tuple(numbers_in(text)), row))
    return out


def escape_marks(text: str) -> str:
    """A quote's own `[18]` (a reference) or "image 3" must not read as a citation once copied."""
    text = TEXT_MARK.sub(lambda m: m.group(0).replace("[", "\\[").replace("]", "\\]"), text)
    return _MARK_WORD.sub(lambda m: f"{m.group(1)}\u2060{m.group(2)}", text)  # a word joiner: shown as is


def _description_sentences(quote: ContextQuote) -> list[str]:
    """Prose a describer wrote about an image (VLM-text), without what the caption, the OCR-text
    or the table already give, and without its bookkeeping lines."""
    if not quote.vlm_text:
        return []
    raw = quote.caption or ""
    known = fold(f"{raw}\n{dehyphenate(raw)}\n{quote.ocr_text or ''}")
    out: list[str] = []
    for line in quote.vlm_text.splitlines():
        line = line.strip()
        if not line or line.endswith(":") or line.startswith("|") or _BRACKETED.match(line):
            continue
        if fold(LEAD_IN.sub("", line)) in known:  # "Caption: Table 2: ..." repeats the caption
            continue
        line = _QUOTED_LINE.sub("", line).replace("“", "").replace("”", "")
        out += [s for s in split_prose(dehyphenate(line)) if fold(s) not in known and len(content_words(s)) >= 3]
    return out
