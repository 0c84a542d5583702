"""Questions that count a document's lettered or numbered parts: "How many appendices appear in the
document?", "How many chapters does the guide have?".

Each part is counted once by its label, where a line opens with it: a heading ("Appendix C:
Survey Items") or a contents line ("Appendix C ..... 14"), never a sentence that mentions it ("see
Appendix C"). A count over the whole document only, as item_count.py counts tables and figures (the
quotes naming the parts join the context, cited, and item_count.count_answer writes the answer); a
question with another scope, or a document that labels no such part, goes to the ranked answer.
Worth, on the dev half: one more answerable question right (a count of appendices); the corpus dev
sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from interleaf.expand.instructions import without_instructions
from interleaf.generate.document_rows import HEADINGS, LINED

# the plural a question counts by -> the word that labels each part
PARTS = {"appendices": "Appendix", "appendixes": "Appendix", "chapters": "Chapter"}
_WORD = "|".join(PARTS)
_WHOLE = r"(?:document|report|paper|guide|guidebook|book|manual|brochure|file|plan)"
_ASKED = (
    # "how many appendices (are there | appear | are included) in the document?"
    re.compile(
        rf"^\s*how\s+many\s+(?P<word>{_WORD})\s+(?:(?:are|were)\s+)?(?:there\s+)?"
        rf"(?:(?:appear|appearing|included|contained|given)\s+)?(?:in|within)\s+(?:the|this)\s+{_WHOLE}\s*[?.]?\s*$",
        re.I,
    ),
    # "how many chapters does the guide have?"
    re.compile(
        rf"^\s*how\s+many\s+(?P<word>{_WORD})\s+(?:does|do)\s+(?:the|this)\s+{_WHOLE}\s+(?:have|contain|include)"
        r"\s*[?.]?\s*$",
        re.I,
    ),
)
_LABEL = r"(?P<label>[A-Z]|[0-9]{1,2}|[IVX]{1,4})"


def parts_asked(question: str) -> str | None:
    """The word labelling the parts a question counts over its whole document ("Appendix"), or None."""
    asked = without_instructions(question)
    for pattern in _ASKED:
        if m := pattern.match(asked):
            return PARTS[m.group("word").lower()]
    return None


def numbered_parts(rows: Iterable[Mapping[str, Any]], word: str) -> list[tuple[str, str]]:
    """("Appendix C", quote id) of each part the document labels, in document order: its heading,
    else the first quote with a line opening with the label (followed by a colon, a dash, a title
    or dot leaders); then ("", quote id) of a contents quote listing two or more of them, which the
    answer cites for the count as a whole (a heading prints one label, never the parts' word)."""
    line = re.compile(rf"^\s*{word}\s+{_LABEL}(?:\s*[:.\-–—]|\s+[A-Z(]|\s*$)")
    found: dict[str, str] = {}
    headed: dict[str, str] = {}  # the part's own heading, cited over a contents line where there is one
    listing: dict[str, int] = {}  # quote id -> the labels it lists
    for r in sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"])):
        if r["kind"] not in LINED:
            continue
        for text in (r["text"] or "").split("\n"):
            if m := line.match(text):
                label = f"{word} {m.group('label')}"
                found.setdefault(label, r["quote_id"])
                listing[r["quote_id"]] = listing.get(r["quote_id"], 0) + 1
                if r["kind"] in HEADINGS:
                    headed.setdefault(label, r["quote_id"])
    contents = [("", q) for q, n in listing.items() if n >= 2][:1]
    marks = [label.split()[-1] for label in found]
    roman = any(len(m) > 1 and set(m) <= set(_ROMAN) for m in marks)  # "II" makes "I" a roman one
    ordered = sorted(found, key=lambda label: _label_order(label.split()[-1], roman))
    return [(label, headed.get(label, found[label])) for label in ordered] + contents


_ROMAN = {"I": 1, "V": 5, "X": 10}


def _label_order(mark: str, roman: bool) -> tuple[int, int | str]:
    """The order the document numbers its parts in, whatever order they are read in: "B" after "A",
    "10" after "9", "IV" after "III" (where the labels are roman numbers)."""
    if mark.isdigit():
        return (0, int(mark))
    if roman and set(mark) <= set(_ROMAN):
        values = [_ROMAN[c] for c in mark]
        return (1, sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values)))
    return (2, mark)


# how an answer states the count: "5 appendices: Appendix A (page 3), ..., Appendix E (page 40)"
_STATED = re.compile(rf"(?<![\d.,])(?P<count>\d+)\s+(?P<word>{_WORD})\b", re.I)


def counts_in_plain_sight(claim: str) -> list[re.Match[str]]:
    """The counts of parts the claim states and backs by listing as many labels after them: a count
    no quote prints, which the labels listed show."""
    out = []
    for m in _STATED.finditer(claim):
        word = PARTS[m.group("word").lower()]
        listed = {label for label in re.findall(rf"\b{word}\s+{_LABEL}\b", claim[m.end() :])}
        if len(listed) == int(m.group("count")):
            out.append(m)
    return out
