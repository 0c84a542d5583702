"""Questions answered from the lines of a document's financial statements: a ratio its own name
spells out ("What is the Inventory to Total Equity ratio for fiscal 2023?", "Kestrel's FY2019
net sales to average total equity ratio?"), or a line item asked by its name for a year
("What deferred revenue does Kestrel have for fiscal 2023?").

A ratio's name says the formula: the line item before "to" over the one after it. Each item is
read where the document's statements print it, as a line of values under a line of years
("Deferred revenue 4,210 3,987 3,502" under "... 2023 ... 2022 ... 2021"). "Average" before an
item is the mean of the year asked and the year before. A line item is the line whose label is the
item's words, no more and no fewer (a plural as its singular: "inventory" is "Inventories"), so
that "total equity" is never "Total shareholders' equity"; where the document prints one label
with different values for the year (a segment's table beside the company's), the value most of its
lines print is taken, and none where that is a tie. Values in brackets (an expense printed as a
deduction) count by their size. The year is the one the question names (FY2017, fiscal 2023, the
fiscal year ending June 30, 2024); a ratio is rounded as the question says (to three decimal
places, in percentage terms), else to `PLACES`. The lines used join the context, cited. Where an
item, the year or the year before (for an average) is not printed, the question goes to the ranked
answer. Worth on the MMLongBench-Doc dev half: see `ratio_asked` and `item_asked`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pyarrow as pa

from interleaf.generate.asking import wh_phrase
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
# a value as a statement prints it: "4,210", "$1,205" (or "$" apart), "(312)", "17.6", or a dash for none
_VALUE = re.compile(r"\$?(?:\(\d[\d,]*(?:\.\d+)?\)|-?\d[\d,]*(?:\.\d+)?|[-–—])")
# a line's label: it opens with a letter and holds no digit, currency sign or bracket
_LABEL = re.compile(r"[^\W\d_][^$\d()]*")


@dataclass(frozen=True)
class RatioAsked:
    numerator: str  # the item's words, "net sales"
    denominator: str
    averaged: tuple[bool, bool]  # "average" before the numerator, the denominator
    year: int
    places: int
    percent: bool


def ratio_asked(question: str) -> RatioAsked | None:
    """The ratio a question asks for by a name that spells it out, or None. Worth on the
    MMLongBench-Doc dev half: two answerable questions more right (of 234), one ratio of two items
    for a year and one over an item averaged over two years; the corpus dev sets do not
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
    year = _year_asked(question)
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


@dataclass(frozen=True)
class ItemAsked:
    item: str  # the item's words, "deferred revenue"
    year: int


# the wh-words that ask a line item's value ("what deferred revenue does ...", "how much revenue ...")
_VALUE_ASKED = re.compile(r"^\s*(?:what|how\s+much)\b", re.I)
_ARTICLE = re.compile(r"^(?:the|its|their)\s+", re.I)


def item_asked(question: str) -> ItemAsked | None:
    """The line item a question asks the value of, for the year it names, where the words the
    question asks about are the item's name ("What is total inventory in FY2021?"), or None.
    Worth on the MMLongBench-Doc dev half: one answerable question more right (of 234), a balance
    sheet line the ranked answer took from a sentence splitting it in two; three more it
    answered right already are answered the same; the corpus dev sets do not move."""
    if ratio_asked(question) is not None or not _VALUE_ASKED.match(question):
        return None
    span = wh_phrase(question)
    year = _year_asked(question)
    if span is None or year is None:
        return None
    item = _ARTICLE.sub("", question[span[0] : span[1]].strip()).casefold()
    return ItemAsked(item, year) if item else None


def statement_asked(question: str) -> RatioAsked | ItemAsked | None:
    return ratio_asked(question) or item_asked(question)


def _year_asked(question: str) -> int | None:
    return next((int(y.group(1)) for p in _YEAR_ASKED if (y := p.search(question))), None)


def printed_lines(text: str) -> list[tuple[str, dict[int, Decimal], str]]:
    """(label, {year: value}, the years' line and the value's line as printed) of each line of a
    statement's text that prints one value per year of the line of years above it."""
    out = []
    years: list[int] = []
    header = ""
    for line in (line.strip() for line in text.splitlines()):
        found = [int(y) for y in _YEAR.findall(line)]
        if len(set(found)) >= 2 and len(found) == len(set(found)) and _only_dates(line):
            years, header = found, line
            continue
        split = _label_and_values(line) if years else None
        if split is None or len(split[1]) != len(years):
            continue
        label, values = split
        read = {y: v for y, printed in zip(years, values, strict=True) if (v := _value(printed)) is not None}
        out.append((label, read, f"{header}\n{line}"))
    return out


def _label_and_values(line: str) -> tuple[str, list[str]] | None:
    """A line's label and the values it ends with ("Inventories $ 4,210 $ 3,987" -> "Inventories",
    ["4,210", "3,987"]), read token by token from its end; None where fewer than two values end it
    or what is before them is no label."""
    tokens = line.split()
    values: list[str] = []
    while tokens and (tokens[-1] == "$" or _VALUE.fullmatch(tokens[-1])):
        token = tokens.pop()
        if token != "$":
            values.insert(0, token)
    label = " ".join(tokens).strip(" .:")
    return (label, values) if len(values) >= 2 and _LABEL.fullmatch(label) else None


def _only_dates(line: str) -> bool:
    """A line of years prints no other number than a day of a month or a note's mark ("January 28,
    2023 January 29, 2022", "2019 2020 (1)"), unlike a line naming years in its label ("Notes due
    2027 and 2030 1,000 1,000")."""
    return all(int(n) <= 31 for n in re.findall(r"\d+", _YEAR.sub(" ", line.replace(",", ""))))


def _value(printed: str) -> Decimal | None:
    digits = re.sub(r"[^\d.]", "", printed)
    return Decimal(digits) if digits and digits != "." else None


def _same_item(label: str, item: str) -> bool:
    """The label is the item's words, no more and no fewer ("Other deferred revenue" is not "deferred
    revenue"), a plural as its singular."""
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
    """The ratio from the statement lines (`printed_lines`), or None where an item, the year asked
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


def statement_lines(quotes: pa.Table, asked: Iterable[tuple[str, str, Sequence[str]]]) -> dict[str, Lined]:
    """question_id -> the statement lines its answer is read from, with their quotes, for each
    question of (question_id, question, doc_ids) asking a ratio or a line item of one document that
    its lines give."""
    wanted = {qid: (a, docs[0]) for qid, text, docs in asked if len(docs) == 1 and (a := statement_asked(text))}
    if not wanted:
        return {}
    lines = {doc: _lines_of(rows) for doc, rows in rows_by_document(quotes, (d for _, d in wanted.values())).items()}
    out = {}
    for qid, (a, doc) in wanted.items():
        found = lines[doc]  # each document read once, however many questions ask of it
        if _read(a, [line for line, _ in found]) is None:
            continue
        items = (a.numerator, a.denominator) if isinstance(a, RatioAsked) else (a.item,)
        used = [
            (printed, quote_id) for (label, _, printed), quote_id in found if any(_same_item(label, i) for i in items)
        ]
        out[qid] = tuple(dict.fromkeys(used))
    return out


def _read(
    asked: RatioAsked | ItemAsked, lines: Sequence[tuple[str, dict[int, Decimal], str]]
) -> WorkedRatio | tuple[str, dict[int, Decimal]] | None:
    """The ratio worked out, or the item's label and value, from the lines; None where they do not give it."""
    if isinstance(asked, RatioAsked):
        return worked_ratio(asked, lines)
    return _item_values(asked.item, (asked.year,), lines)


def _lines_of(rows: Sequence[Mapping[str, Any]]) -> list[tuple[tuple[str, dict[int, Decimal], str], str]]:
    ordered = sorted(rows, key=lambda r: (r["page_idx"], r["layout_idx"]))
    return [(line, r["quote_id"]) for r in ordered for line in printed_lines(r["text"] or "")]


def statement_answer(request: AnswerRequest) -> tuple[str, str]:
    """The answer read from statement lines (`request.statement_lines` set) and its short answer:
    "The ratio for 2023 is 0.412: Inventories 4,210 [1] over Total equity 10,218 [2].", "Deferred
    revenue for 2023 is 1,205 [1].", each line's quote cited (a statement read as an image placed after the
    sentence)."""
    asked = statement_asked(request.question)
    assert asked is not None
    by_id = {q.quote_id: q for q in request.quotes}
    lines = [
        (line, by_id[quote_id]) for printed, quote_id in request.statement_lines for line in printed_lines(printed)
    ]
    found = _read(asked, [line for line, _ in lines])
    assert found is not None
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

    if isinstance(found, tuple):  # a line item's value: "Deferred revenue for 2023 is 1,205"
        label, read = found
        said = side(label, read).replace(f" {read[asked.year]:,}", f" for {asked.year} is {read[asked.year]:,}", 1)
        return f"{said}.{''.join(images)}", f"{read[asked.year]}"
    assert isinstance(asked, RatioAsked)
    value = found.value * 100 if asked.percent else found.value
    rounded = value.quantize(Decimal(1).scaleb(-asked.places), rounding=ROUND_HALF_UP)
    short = f"{rounded}{'%' if asked.percent else ''}"
    top, bottom = side(*found.numerator), side(*found.denominator)
    placed = "".join(dict.fromkeys(images))
    return f"The ratio for {asked.year} is {short}: {top} over {bottom}.{placed}", short
