"""Questions that count the items a document lists under one name: "How many kettle drills are
included in all the lessons?", "How many field trips are there in the whole course?".

An item is a line that opens with the name the question counts, singular, followed by a dash, a
colon or its number, and then its own title: "• Kettle Drill – Descaling", "Field Trip #2:
Okapi Reserve". Each item is counted once however often the document repeats it (a course plan lists
its drills in each lesson and again in a summary): by its number where it has one, else by the
first words of its title. The count is over the whole document (no scope, "in the whole course",
"in all the lessons"); a question about a part of it goes to the ranked answer, as does a
document listing fewer than two such items. The quotes listing the items join the context, cited.
Worth, on the MMLongBench-Doc dev half: one answerable question more right by the benchmark's
strict rules (of 234). A second, a count of a course's tests, now says 7 where its gold says 6; the lenient
figure counts it right, as one of the titles listed prints a 6. The corpus dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from interleaf.evidence import fold
from interleaf.expand.instructions import without_instructions
from interleaf.generate.document_rows import LINED, rows_by_document
from interleaf.generate.protocol import AnswerRequest
from interleaf.text.references import FAMILY_WORDS, PART_WORDS

# "how many kettle drills (are there) (included) (in all the lessons | in the whole course)?"
_ASKED = re.compile(
    r"^\s*how\s+many\s+(?P<items>[^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,4}?)\s+(?:(?:are|were)\s+)?(?:there\b\s*)?"
    r"(?:(?:included|listed|given|assigned|set|required)\s+)?"
    r"(?:in\s+(?:all\s+(?:of\s+)?the\s+[\w-]+|the\s+(?:whole|entire)\s+[\w-]+|(?:the|this)\s+(?:document|file)))?"
    r"\s*[?.]?\s*$",
    re.I,
)
# what item_count.py and part_count.py count: a float's or a part's word ("tables", "charts", "appendices")
_COUNTED_ELSEWHERE = re.compile(
    rf"^(?:{'|'.join((*(w for words in FAMILY_WORDS.values() for w in words), *PART_WORDS))})$", re.I
)
# an unnumbered item is told apart by the first words of its title (set by reading the dev half's
# syllabus, whose summary repeats its items cut short after three words or more; not fitted)
_BULLET = r"^[\s•·▪◦*\-–o§]*"
_KEY_WORDS = 3

Listed = tuple[tuple[str, str], ...]  # (the item's title, quote id), in document order


def _singular(word: str) -> list[str]:
    """A plural's singular forms, the likeliest first: "ponies" -> "pony", "whizzes" -> "whiz"."""
    w = word.casefold()
    forms = []
    if w.endswith("ies"):
        forms.append(w[:-3] + "y")
    if w.endswith("zzes"):
        forms.append(w[:-3])
    if w.endswith(("ses", "xes", "ches", "shes")):
        forms.append(w[:-2])
    if w.endswith("s") and not w.endswith("ss"):
        forms.append(w[:-1])
    return forms


def items_asked(question: str) -> list[str] | None:
    """The singular forms of what a question counts over its whole document ("kettle drill"), or None."""
    m = _ASKED.match(without_instructions(question))
    if m is None:
        return None
    words = m.group("items").split()
    forms = [" ".join([*words[:-1], s]) for s in _singular(words[-1])]
    if not forms or _COUNTED_ELSEWHERE.match(words[-1]):
        return None
    return forms


def item_title(line: str, forms: Sequence[str]) -> tuple[str, str] | None:
    """(the item's key, its title) where the line opens with one of the forms and then its number or
    a separator: "• Kettle Drill – Descaling the Spout" -> ("descaling the spout", "Descaling the Spout")."""
    names = "|".join(re.escape(f) for f in forms)
    m = re.match(rf"{_BULLET}(?:{names})\s*(?:#\s*(?P<number>\d+)\s*[:\-–—.]?|[:\-–—]+)\s*(?P<title>\S.*)$", line, re.I)
    if m is None:
        return None
    title = m.group("title").strip().rstrip(":")
    key = f"#{m.group('number')}" if m.group("number") else " ".join(fold(title).split()[:_KEY_WORDS])
    return key, title


def listed_items(rows: Iterable[Mapping[str, Any]], forms: Sequence[str]) -> Listed:
    """(title, quote id) of each item the document lists under one of the forms, once each."""
    found: dict[str, tuple[str, str]] = {}
    for r in sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"])):
        if r["kind"] not in LINED:
            continue
        for line in (r["text"] or "").split("\n"):
            item = item_title(line, forms)
            # the same item printed again, whole or cut short ("Kettle Descaling" and "Kettle")
            if item is not None and not any(_same(item[0], key) for key in found):
                found[item[0]] = (item[1], r["quote_id"])
    return tuple(found.values()) if len(found) >= 2 else ()


def _same(key: str, other: str) -> bool:
    """Two items' keys name one item: the same number, or titles one of which begins the other."""
    if key.startswith("#") or other.startswith("#"):
        return key == other
    shorter, longer = sorted((key.split(), other.split()), key=len)
    return longer[: len(shorter)] == shorter


def items_listed(quotes: pa.Table, asked: Iterable[tuple[str, str, Sequence[str]]]) -> dict[str, Listed]:
    """question_id -> `listed_items`, for each question of (question_id, question, doc_ids) asked of
    one document that counts the items it lists under one name."""
    counting = {qid: (f, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (f := items_asked(text))}
    if not counting:
        return {}
    by_doc = rows_by_document(quotes, (doc for _, doc in counting.values()))
    return {qid: found for qid, (forms, doc) in counting.items() if (found := listed_items(by_doc[doc], forms))}


def listed_answer(request: AnswerRequest) -> tuple[str, str]:
    """The answer to a question counting listed items (`request.listed` set), each item's title
    quoted and cited, and its short answer, the count."""
    m = _ASKED.match(without_instructions(request.question))
    noun = " ".join(m.group("items").split()).lower() if m else "items"
    by_id = {q.quote_id: q for q in request.quotes}
    cited = [f"“{title}” (page {by_id[i].page_idx + 1}) [{by_id[i].number}]" for title, i in request.listed]
    listing = cited[0] if len(cited) == 1 else f"{', '.join(cited[:-1])} and {cited[-1]}"
    return f"{len(cited)} {noun} are listed: {listing}.", str(len(cited))
