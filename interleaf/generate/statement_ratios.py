"""Questions asking for a ratio its own name spells out: "What is the Gross Profit to Total Assets
ratio for fiscal 2023?", "Kestrel's FY2019 interest expense to average long-term debt ratio?".

The name says the formula: the line item before "to" over the one after it, each read where the
document's statements print it, as a line of values under a line of years ("Gross profit 9,912
11,640 10,573" under "... 2023 ... 2022 ... 2021"). "Average" before an item is the mean of the
year asked and the year before. A line item is the line whose label is the item's words, no more
and no fewer (word forms aside: "liability" is "Total liabilities"), so that "total assets" is never
"Total current assets"; where the document prints one label with different values for the year
(a segment's table beside the company's), the value most of its lines print is taken, and none
where that is a tie. Values in brackets (an expense printed as a deduction) count by their size.
The year is the one the question names (FY2017, fiscal 2023, the fiscal year ending January 28,
2023); the ratio is rounded as the question says (to three decimal places, in percentage terms),
else to `PLACES`. The lines used join the context, cited. No ratio is worked out where an item,
the year or the year before (for an average) is not printed: the question goes to the ranked answer.
Worth on the MMLongBench-Doc dev half: see `ratio_asked`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pyarrow as pa

from interleaf.generate.citations import image_alt
from interleaf.generate.document_rows import rows_by_document
from interleaf.generate.protocol import AnswerRequest

# "<numerator> to <denominator> ratio"; the numerator's words are read back from "to" (ratio_asked)
_RATIO = re.compile(r"\s+to\s+(?P<denominator>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,5}?)\s+ratio\b", re.I)
# what ends the numerator's words, read back from "to": a function word, a possessive, a year
_NOT_ITEM = re.compile(r"^(?:what|which|is|are|was|were|the|a|an|of|for|in|its|their|our|\S*['’]s|\S*\d\S*)$", re.I)
_AVERAGE = re.compile(r"^(?:average|avg\.?|mean)\s+", re.I)
_YEAR_ASKED = (
    re.compile(r"\bFY\s?'?((?:19|20)\d{2})\b", re.I),
    re.compile(r"\bfiscal\s+(?:year\s+)?(?:end(?:ing|ed)\s+\w+\s+\d{1,2},?\s+)?((?:19|20)\d{2})\b", re.I),
    re.compile(r"\b((?:19|20)\d{2})\b"),
)
_PLACES_ASKED = re.compile(r"\b(?:to|into)\s+(\w+)\s+decimals?\b", re.I)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_PERCENT_ASKED = re.compile(r"\bpercentage\s+terms?\b|\bas\s+a\s+percentage\b|\bin\s+percent\b", re.I)
# places the ratio is written to when the question does not say (not fitted: how a ratio is printed)
PLACES = 3

_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# a value as a statement prints it: "9,912", "$ 1,419", "(848)", "21.4", or a dash for none
_VALUE = r"(?:\$\s*)?(?:\(\s*\d[\d,]*(?:\.\d+)?\s*\)|-?\d[\d,]*(?:\.\d+)?|[-–—])"
_LINE = re.compile(rf"^(?P<label>[^\W\d_][^$\d()]*?)\s*(?P<values>(?:\s*{_VALUE}){{2,}})\s*$")


@dataclass(frozen=True)
class RatioAsked:
    numerator: str  # the item's words, "gross profit"
    denominator: str
    averaged: tuple[bool, bool]  # "average" before the numerator, the denominator
    year: int
    places: int
    percent: bool


def ratio_asked(question: str) -> RatioAsked | None:
    """The ratio a question asks for by a name that spells it out, or None. Worth on the
    MMLongBench-Doc dev half: two answerable questions more right (of 234), a gross profit to total
    assets ratio and an interest expense to average long-term debt ratio; the corpus dev sets do not
    move."""
    m = _RATIO.search(question)
    if m is None:
        return None
    before = question[: m.start()].split()
    words: list[str] = []
    for word in reversed(before):
        if _NOT_ITEM.match(word.strip(",;:?")):
            break
        words.insert(0, word)
    year = next((int(y.group(1)) for p in _YEAR_ASKED if (y := p.search(question))), None)
    if not words or year is None:
        return None
    numerator, denominator = " ".join(words), m.group("denominator")
    places = _PLACES_ASKED.search(question)
    return RatioAsked(
        _AVERAGE.sub("", numerator).casefold(),
        _AVERAGE.sub("", denominator).casefold(),
        (_AVERAGE.match(numerator) is not None, _AVERAGE.match(denominator) is not None),
        year,
        _NUMBER_WORDS.get(places.group(1).casefold(), PLACES) if places else PLACES,
        _PERCENT_ASKED.search(question) is not None,
    )


def statement_lines(text: str) -> list[tuple[str, dict[int, Decimal], str]]:
    """(label, {year: value}, the years' line and the value's line as printed) of each line of a
    statement's text that prints one value per year of the line of years above it."""
    out = []
    years: list[int] = []
    header = ""
    for line in (line.strip() for line in text.splitlines()):
        found = [int(y) for y in _YEAR.findall(line)]
        if len(set(found)) >= 2 and len(found) == len(set(found)):
            years, header = found, line
            continue
        m = _LINE.match(line)
        if m is None or not years:
            continue
        values = re.findall(_VALUE, m.group("values"))
        if len(values) != len(years):
            continue
        read = {y: v for y, printed in zip(years, values, strict=True) if (v := _value(printed)) is not None}
        out.append((m.group("label").strip(" .:"), read, f"{header}\n{line}"))
    return out


def _value(printed: str) -> Decimal | None:
    digits = re.sub(r"[^\d.]", "", printed)
    return Decimal(digits) if digits and digits != "." else None


def _same_item(label: str, item: str) -> bool:
    """The label is the item's words, no more and no fewer ("Other long-term debt" is not "long-term
    debt"), a plural as its singular."""
    return bool(item) and _words(label) == _words(item)


def _words(text: str) -> set[str]:
    words = re.findall(r"[^\W_]+", text.casefold())
    return {
        w[:-3] + "y" if w.endswith("ies") else w[:-1] if w.endswith("s") and not w.endswith("ss") else w for w in words
    }


@dataclass(frozen=True)
class WorkedRatio:
    value: Decimal  # the ratio, as a fraction
    numerator: tuple[str, dict[int, Decimal]]  # the label as printed, its values by year
    denominator: tuple[str, dict[int, Decimal]]


def worked_ratio(asked: RatioAsked, lines: Iterable[tuple[str, dict[int, Decimal], str]]) -> WorkedRatio | None:
    """The ratio from the statement lines (`statement_lines`), or None where an item, the year asked
    or the year before (for an average) is not printed, or the lines disagree."""
    lines = list(lines)
    sides = []
    for item, averaged in zip((asked.numerator, asked.denominator), asked.averaged, strict=True):
        years = (asked.year, asked.year - 1) if averaged else (asked.year,)
        found = _item_values(item, years, lines)
        if found is None:
            return None
        sides.append(found)
    (top_label, top), (bottom_label, bottom) = sides
    amounts = [sum(v.values(), Decimal(0)) / len(v) for v in (top, bottom)]
    if amounts[1] == 0:
        return None
    return WorkedRatio(amounts[0] / amounts[1], (top_label, top), (bottom_label, bottom))


def _item_values(
    item: str, years: Sequence[int], lines: Sequence[tuple[str, dict[int, Decimal], str]]
) -> tuple[str, dict[int, Decimal]] | None:
    """The item's label and its values for the years, as most of the lines labelled with it print them."""
    printed = [(label, {y: read[y] for y in years if y in read}) for label, read, _ in lines if _same_item(label, item)]
    printed = [(label, read) for label, read in printed if len(read) == len(years)]
    counts = Counter(tuple(sorted(read.items())) for _, read in printed).most_common()
    if not counts or (len(counts) > 1 and counts[1][1] == counts[0][1]):
        return None  # not printed, or as many lines print another value
    best = counts[0][0]
    return next(label for label, read in printed if tuple(sorted(read.items())) == best), dict(best)


Lined = tuple[tuple[str, str], ...]  # (the years' line and the item's line as printed, quote id)


def ratio_lines(quotes: pa.Table, asked: Iterable[tuple[str, str, Sequence[str]]]) -> dict[str, Lined]:
    """question_id -> the statement lines its ratio is worked out from, with their quotes, for each
    question of (question_id, question, doc_ids) asking a ratio of one document that its lines give."""
    wanted = {qid: (a, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (a := ratio_asked(text))}
    if not wanted:
        return {}
    by_doc = rows_by_document(quotes, (doc for _, doc in wanted.values()))
    out = {}
    for qid, (a, doc) in wanted.items():
        found = _lines_of(by_doc[doc])
        if worked_ratio(a, (line for line, _ in found)) is None:
            continue
        used = [
            (printed, quote_id)
            for (label, _, printed), quote_id in found
            if _same_item(label, a.numerator) or _same_item(label, a.denominator)
        ]
        out[qid] = tuple(dict.fromkeys(used))
    return out


def _lines_of(rows: Sequence[Mapping[str, Any]]) -> list[tuple[tuple[str, dict[int, Decimal], str], str]]:
    ordered = sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"]))
    return [(line, r["quote_id"]) for r in ordered for line in statement_lines(r["text"] or "")]


def ratio_answer(request: AnswerRequest) -> tuple[str, str]:
    """The answer to a ratio its name spells out (`request.ratio_lines` set) and its short answer:
    "The ratio for 2023 is 0.627: Gross profit 9,912 [1] over Total assets 15,803 [2].", each line's
    quote cited (a statement read as an image placed after the sentence)."""
    asked = ratio_asked(request.question)
    assert asked is not None
    by_id = {q.quote_id: q for q in request.quotes}
    lines = [(line, by_id[quote_id]) for printed, quote_id in request.ratio_lines for line in statement_lines(printed)]
    worked = worked_ratio(asked, (line for line, _ in lines))
    assert worked is not None
    value = worked.value * 100 if asked.percent else worked.value
    rounded = value.quantize(Decimal(1).scaleb(-asked.places), rounding=ROUND_HALF_UP)
    short = f"{rounded}{'%' if asked.percent else ''}"

    images: list[str] = []

    def side(label: str, read: Mapping[int, Decimal]) -> str:
        quote = next(q for (printed_label, _, _), q in lines if printed_label == label)
        if len(read) > 1:
            amount = f", the average of {' and '.join(f'{read[y]:,} ({y})' for y in sorted(read))},"
        else:
            amount = f" {next(iter(read.values())):,}"
        if quote.modality == "image":  # placed after the sentence
            images.append(f" ![{image_alt(quote)}](image{quote.number})")
            return f"{label}{amount}".rstrip(",")
        return f"{label}{amount} [{quote.number}]"

    top, bottom = side(*worked.numerator), side(*worked.denominator)
    placed = "".join(dict.fromkeys(images))
    return f"The ratio for {asked.year} is {short}: {top} over {bottom}.{placed}", short
