"""Questions that count a document's numbered tables or figures: "How many tables are shown in
the report?", "How many figures does the paper have?", 'How many tables include "Recall@5"?'.

The count is read from the whole document, not from the retrieved context: each label a caption
opens with ("Table 3", "Figure 5") is one item, counted once however many quotes repeat it. Only a
count over the whole document, or over its appendix (from the heading that opens it to the end), is
answered here; one over another part of it ("in the Section", a word that opens one of its
headings) or one with a condition ("... that show a map") goes to the ranked answer, but one: a
term the question quotes that each item counted prints ('How many tables include "Recall@5" as a
metric?'), read from the tables' (figures') own text. A document that labels no item of the kind
asked leaves the question to it too: its tables may be there, unnumbered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from interleaf.expand.instructions import without_instructions
from interleaf.generate.citations import image_alt
from interleaf.generate.document_rows import rows_by_document
from interleaf.generate.part_count import PARTS, numbered_parts, parts_asked
from interleaf.generate.protocol import AnswerRequest
from interleaf.kinds import modality_of
from interleaf.structure.references import label_line
from interleaf.text.references import FAMILY_WORDS, NUMBER, PART_WORDS, Family, Label, caption_label

# the plural that asks for every item of a family (a "pie chart" or a "photo" is a kind of figure
# no caption label says)
_COUNTED: dict[str, Family] = {"figures": "figure", "tables": "table"}
_WORD = "|".join(_COUNTED)
# "in the appendix", and the whole it is a part of, if named ("in the appendix of the paper")
_SCOPE = (
    r"(?:(?:in|within)\s+(?:the|this)\s+(?:(?:whole|entire)\s+)?(?P<scope>[\w-]+)\s*"
    r"(?:(?:in|of)\s+(?:the|this)\s+[\w-]+\s*)?)"
)
_TOTAL = r"(?:(?:in\s+total|in\s+all|altogether)\s*)?"
_VERB = r"(?:(?:included|contained|shown|presented|given|printed|used|appear|appearing)\s+)"
_HOLD = r"(?:include|contain|mention|report|use|show|print|list|have)s?|(?:are|were)\s+(?:including|containing|using)"
COUNTING = (
    # "how many tables are (there) (included) in the document (in total)?"
    re.compile(
        rf"^\s*how\s+many\s+(?P<word>{_WORD})\s+(?:(?:are|were)(?:\s+there)?\s*)?{_VERB}?{_SCOPE}?{_TOTAL}[?.]?\s*$",
        re.I,
    ),
    # "how many figures does the paper have?"
    re.compile(
        rf"^\s*how\s+many\s+(?P<word>{_WORD})\s+(?:does|do)\s+(?:the|this)\s+(?P<scope>[\w-]+)\s+"
        rf"(?:have|contain|include)\s*{_TOTAL}[?.]?\s*$",
        re.I,
    ),
    # 'how many tables (in the paper) include "Recall@5" (as a metric)?': the items whose own text prints
    # the term the question quotes (a term it does not quote is a condition left to the ranked
    # answer). Worth on the MMLongBench-Doc dev half: one answerable question more right (of 234)
    re.compile(
        rf"^\s*how\s+many\s+(?P<word>{_WORD})\s+{_SCOPE}?(?:{_HOLD})\s+[\"“](?P<term>[^\"”]{{1,60}})[\"”]"
        r"(?:\s+as\s+(?:an?\s+|the\s+)?[\w-]+)?\s*[?.]?\s*$",
        re.I,
    ),
)
# a caption's label as a line opens with it: "Table 7: ...", "Figure 8. ...", "Fig. 2 — ..." (never
# "Table 3 shows ...", a sentence about the table, nor "Tables 4-5 show ...": a caption is one item)
_FLOAT_WORD = "|".join(w for words in FAMILY_WORDS.values() for w in words)
_CAPTION_LINE = re.compile(rf"^\s*(?P<word>{_FLOAT_WORD})\.?\s*{NUMBER}(?![0-9A-Za-z]|[.\-–][0-9])\s*[:.\-–—|]", re.I)
# a numbered part of a document ("in the appendix", "in the chapter"): a part, whether or not a heading names it
_PART = re.compile(rf"^(?:{'|'.join(PART_WORDS)})$", re.I)
# Heading kinds whose first word, when the question's scope word, makes the scope a part of the document
_HEADED = frozenset({"title", "header"})
# The items cited in the answer: the rest are counted and named, not placed
SHOWN = 6


@dataclass(frozen=True)
class CountAsked:
    family: Family
    scope: str | None  # the word after "in the", None when the question names no scope
    term: str | None = None  # the quoted term each item counted prints ('include "F1"'), if any


def count_asked(question: str) -> CountAsked | None:
    """The family a question counts over its whole document, or None."""
    asked = without_instructions(question)
    for pattern in COUNTING:
        m = pattern.match(asked)
        if m:
            term = m.groupdict().get("term")
            return CountAsked(_COUNTED[m.group("word").lower()], m.group("scope"), term.strip() if term else None)
    return None


def numbered_items(rows: Iterable[Mapping[str, Any]], asked: CountAsked) -> list[tuple[Label, str]] | None:
    """(label, quote id) of each item of the family the document numbers, in document order (the
    first quote whose caption, or a line of it, opens with the label); None where the scope word
    names a part of the document ("appendix", "section") or opens one of its headings (a part of it
    is asked about, not the whole)."""
    items: dict[Label, str] = {}
    if asked.scope and _APPENDIX.match(asked.scope):
        return _in_appendix(rows, asked)
    if asked.scope and _PART.match(asked.scope):
        return None
    if asked.term:
        return _items_printing(rows, asked)
    scope = re.compile(rf"^(?:[\dA-Z][\d.]*\s+)?{re.escape(asked.scope)}\b", re.I) if asked.scope else None
    for r in sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"])):
        text = (r["text"] or "").strip()
        if scope is not None and r["kind"] in _HEADED and scope.match(text):
            return None
        line = label_line(r["kind"], r["caption"], r["text"])
        lines = [line] if line is not None else []
        # a caption the parser ran into a paragraph ("Figure 2: ..."), or into a float's region: there,
        # only of the float's own family (a figure showing another paper's "Table 2: ..." holds no table)
        own = modality_of(r["kind"]) == "text" or r["kind"] == asked.family
        lines += [t for t in text.split("\n") if own and _caption_line(t)]
        for label in (caption_label(t) for t in lines):
            if label is not None and label.family == asked.family:
                items.setdefault(label, r["quote_id"])
    return list(items.items())


# the appendix a question counts in: "in the appendix", "in the appendices"
_APPENDIX = re.compile(r"^appendi(?:x|ces)$", re.I)
# the heading that opens it: one naming it ("Appendix A: Survey Items", "Appendices"), or, where
# none does, the first of the lettered sections ("A Kettle Trials", "A.2 Descaling") a later "B ..." follows
_APPENDIX_HEADING = re.compile(r"^\s*appendi(?:x|ces)\b", re.I)
_LETTERED = re.compile(r"^\s*(?P<letter>[A-Z])(?:\.\d+)*\.?\s+[A-Z][a-z]")


def _in_appendix(rows: Iterable[Mapping[str, Any]], asked: CountAsked) -> list[tuple[Label, str]] | None:
    """The items of the document's appendix: those first captioned from the heading that opens it
    to the end (an appendix comes last), so that a sentence there naming a table of the body
    ("... as Table 3. This is due ...") adds none; None where no heading opens one. Worth on the
    MMLongBench-Doc dev half: one answerable question more right (of 234), a count of the figures
    in a paper's lettered appendix sections; the corpus dev sets do not move."""
    ordered = sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"]))
    headings = [(i, (r["text"] or "").strip()) for i, r in enumerate(ordered) if r["kind"] in _HEADED]
    start = next((i for i, text in headings if _APPENDIX_HEADING.match(text)), None)
    if start is None:
        letters = [(i, m.group("letter")) for i, text in headings if (m := _LETTERED.match(text))]
        opened = (i for i, letter in letters if letter == "A" and any(j > i and b == "B" for j, b in letters))
        start = next(opened, None)
    whole = numbered_items(ordered, CountAsked(asked.family, None, asked.term))
    if start is None or whole is None:
        return None
    inside = {r["quote_id"] for r in ordered[start:]}
    return [(label, quote_id) for label, quote_id in whole if quote_id in inside]


def _items_printing(rows: Iterable[Mapping[str, Any]], asked: CountAsked) -> list[tuple[Label, str]] | None:
    """(label, quote id) of each quote of the family asked whose own text prints the term, in
    document order. A quote whose caption gives no label takes the label a caption line of its page
    gives that no quote of the family there has: a caption the parser set apart from its table."""
    assert asked.term is not None
    term = re.compile(rf"(?<!\w){re.escape(asked.term)}(?!\w)", re.I)
    ordered = sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"]))
    own = [r for r in ordered if r["kind"] == asked.family]
    labelled = {r["quote_id"]: caption_label(label_line(r["kind"], r["caption"], r["text"])) for r in own}
    taken = {label for label in labelled.values() if label is not None}
    loose: dict[int, list[Label]] = {}  # page -> the family's caption labels no quote of the family has
    for r in ordered:
        line = label_line(r["kind"], r["caption"], r["text"])
        lines = [line] if line is not None else []
        if modality_of(r["kind"]) == "text" or r["kind"] == asked.family:  # as `numbered_items` reads them
            lines += [t for t in (r["text"] or "").split("\n") if _caption_line(t)]
        for label in map(caption_label, lines):
            if label is not None and label.family == asked.family and label not in taken:
                taken.add(label)
                loose.setdefault(r["page_idx"], []).append(label)
    items: list[tuple[Label, str]] = []
    for r in own:
        label = labelled[r["quote_id"]] or (loose.get(r["page_idx"]) or [None]).pop(0)
        if label is None:
            return None  # an item no label names: it could not be named in the answer
        if term.search(f"{r['caption'] or ''}\n{r['text'] or ''}"):
            items.append((label, r["quote_id"]))
    return items


def _caption_line(line: str) -> bool:
    m = _CAPTION_LINE.match(line)
    return m is not None and not m.group("word").lower().endswith("s")  # "Tables 2: ..." lists, never captions


def label_text(label: Label) -> str:
    """The label as a reader writes it: "Table 3", "Figure IV" (a roman number in capitals)."""
    number = label.number.upper() if re.fullmatch(r"[ivxlc]+", label.number) else label.number
    return f"{label.family.capitalize()} {number}"


Counted = tuple[tuple[str, str], ...]  # ("Table 3", quote id), in document order


def counted_items(quotes: pa.Table, asked: Iterable[tuple[str, str, Sequence[str]]]) -> dict[str, Counted]:
    """question_id -> ("Table 3", quote id) for each item the document numbers, for each question of
    (question_id, question, doc_ids) that counts a family of items over one whole document."""
    counting = {qid: (a, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (a := count_asked(text))}
    parts = {qid: (w, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (w := parts_asked(text))}
    if not counting and not parts:
        return {}
    by_doc = rows_by_document(quotes, (doc for _, doc in [*counting.values(), *parts.values()]))
    out = {}
    for qid, (a, doc) in counting.items():
        items = numbered_items(by_doc[doc], a)
        if items:
            out[qid] = tuple((label_text(label), quote_id) for label, quote_id in items)
    for qid, (word, doc) in parts.items():  # appendices, chapters: part_count.py
        if labelled := numbered_parts(by_doc[doc], word):
            out[qid] = tuple(labelled)
    return out


def count_answer(request: AnswerRequest) -> tuple[str, str]:
    """The answer to a counting question (`request.counted` set) and its short answer, the count:
    "The document numbers 3 tables: Table 1 (page 12), Table 2 (page 15) and Table 3 (page 17).",
    each item cited (a table or figure placed after the sentence); past `SHOWN` items, the first
    and the last."""
    by_id = {q.quote_id: q for q in request.quotes}
    items = [(label, by_id[quote_id]) for label, quote_id in request.counted if label]
    # a quote listing them all (a contents page: part_count.py), cited for the count, not for an item
    contents = {by_id[quote_id].number for label, quote_id in request.counted if not label}
    listing = "".join(f" [{n}]" for n in sorted(contents))
    family = items[0][0].split()[0].lower()
    noun = family if len(items) == 1 else next((p for p, w in PARTS.items() if w.lower() == family), f"{family}s")
    named = items if len(items) <= SHOWN else [items[0], items[-1]]
    # each quote cited once, at the first item it names
    first = {q.number: label for label, q in reversed(named) if q.modality == "text" and q.number not in contents}
    cited = [
        f"{label} (page {q.page_idx + 1}){f' [{q.number}]' if first.get(q.number) == label else ''}"
        for label, q in named
    ]
    if len(items) > SHOWN:
        listed = f", from {cited[0]} to {cited[1]}"
    elif len(cited) == 1:
        listed = f": {cited[0]}"
    else:
        listed = f": {', '.join(cited[:-1])} and {cited[-1]}"
    placed = "".join(
        f" ![{image_alt(q)}](image{q.number})" for q in dict.fromkeys(q for _, q in named if q.modality == "image")
    )
    asked = count_asked(request.question)
    if asked is not None and asked.term:
        verb = "prints" if len(items) == 1 else "print"
        return f"{len(items)} {noun} of the document {verb} “{asked.term}”{listed}.{placed}", str(len(items))
    whole = "appendix" if asked is not None and asked.scope and _APPENDIX.match(asked.scope) else "document"
    return f"The {whole} numbers {len(items)} {noun}{listing}{listed}.{placed}", str(len(items))
