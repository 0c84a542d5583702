"""Questions that ask what a document's numbered parts are called: "What are the names of Lesson 1 and
Lesson 2?", "What is the title of Chapter 3?", "What is Module 4 called?".

A part is named where a line opens with its label and goes on, after a colon or a dash, with its
title: "LESSON 2: Kettle Care", "Chapter 3 – Spouts and Lids" (a heading, or a contents line). A line
that goes on without one ("Lesson 2 Key Tasks:") or a sentence that mentions the part ("see Lesson 2")
names nothing. The titles are read from the whole document, not from the retrieved context, as
item_count.py reads a count: the quotes that name the parts join the context, cited, and the answer
gives each title in the question's order. Where the document names one of the parts asked in no
such line, the question goes to the ranked answer.
Worth, on the MMLongBench-Doc dev half: one answerable question more right (of 234), no other
verdict moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from interleaf.expand.instructions import without_instructions
from interleaf.generate.document_rows import HEADINGS, LINED, rows_by_document
from interleaf.generate.protocol import AnswerRequest

_LABEL = r"(?-i:[0-9]{1,2}(?:\.[0-9]{1,2})?|[A-Z]|[IVX]{1,4})(?![\w.])"
_LABELS = re.compile(_LABEL)
_ASKED = (
    # "the names of Lesson 1 and Lesson 2", "the titles of chapters 3, 4 and 5", "the name of module-4"
    re.compile(
        rf"\b(?:names?|titles?)\s+of\s+(?:the\s+)?(?P<word>[A-Za-z]{{3,}})[\s-]+(?P<labels>{_LABEL}"
        rf"(?:\s*(?:,|and|&|,\s*and)\s*(?:(?P=word)[\s-]+)?{_LABEL})*)",
        re.I,
    ),
    # "what is Module 4 called?"
    re.compile(
        rf"\bwhat\s+is\s+(?:the\s+)?(?P<word>[A-Za-z]{{3,}})[\s-]+(?P<labels>{_LABEL})\s+(?:called|titled|named)\b",
        re.I,
    ),
)
_DOT_LEADERS = re.compile(r"\s*(?:\.{3,}|…+).*$")  # a contents line's leaders and page number

Named = tuple[tuple[str, str], ...]  # ("Lesson 2", quote id) for each part asked, in the question's order


def titles_asked(question: str) -> tuple[str, list[str]] | None:
    """(the word labelling the parts, their labels) a question asks the names of, or None."""
    asked = without_instructions(question)
    for pattern in _ASKED:
        m = pattern.search(asked)
        if m is None:
            continue
        word = m.group("word")
        singular = word[:-1] if word.lower().endswith("s") and len(word) > 4 else word
        labels = list(dict.fromkeys(_LABELS.findall(m.group("labels"))))
        if labels:
            return singular, labels
    return None


def part_title(text: str, word: str, label: str) -> str | None:
    """The title a line of `text` gives the part ("Kettle Care" of "LESSON 2: Kettle Care"), or None."""
    line = re.compile(rf"^[^\w\n]*{re.escape(word)}[\s-]*{re.escape(label)}\s*[:\-–—.]\s*(?P<title>[A-Za-z].+)$", re.I)
    for m in (line.match(t) for t in text.split("\n")):
        if m is not None:
            title = _DOT_LEADERS.sub("", m.group("title")).strip()
            if title:
                return title
    return None


def named_parts(rows: Iterable[Mapping[str, Any]], word: str, labels: Sequence[str]) -> Named | None:
    """("Lesson 2", quote id) of the quote naming each part asked, its heading where there is one, else
    the first quote with a line naming it; None where one of them is named nowhere."""
    first: dict[str, str] = {}
    headed: dict[str, str] = {}
    for r in sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"])):
        if r["kind"] not in LINED:
            continue
        for label in labels:
            if part_title(r["text"] or "", word, label) is not None:
                first.setdefault(label, r["quote_id"])
                if r["kind"] in HEADINGS:
                    headed.setdefault(label, r["quote_id"])
    if any(label not in first for label in labels):
        return None
    return tuple((f"{word} {label}", headed.get(label, first[label])) for label in labels)


def parts_named(quotes: pa.Table, asked: Iterable[tuple[str, str, Sequence[str]]]) -> dict[str, Named]:
    """question_id -> `named_parts`, for each question of (question_id, question, doc_ids) asked of one
    document that asks what its numbered parts are called."""
    titled = {qid: (t, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (t := titles_asked(text))}
    if not titled:
        return {}
    by_doc = rows_by_document(quotes, (doc for _, doc in titled.values()))
    out = {}
    for qid, ((word, labels), doc) in titled.items():
        if named := named_parts(by_doc[doc], word, labels):
            out[qid] = named
    return out


def titles_answer(request: AnswerRequest) -> tuple[str, str]:
    """The answer to a question asking the parts' names (`request.named_parts` set), each title
    quoted and cited to the quote that names it, and its short answer: the title, or the titles
    as a list."""
    by_id = {q.quote_id: q for q in request.quotes}
    sentences, titles = [], []
    for label, quote_id in request.named_parts:
        q = by_id[quote_id]
        word, number = label.rsplit(" ", 1)
        title = part_title(q.text, word, number) or ""
        titles.append(title)
        sentences.append(f"{label} is titled “{title}” (page {q.page_idx + 1}) [{q.number}].")
    return " ".join(sentences), titles[0] if len(titles) == 1 else repr(titles)
