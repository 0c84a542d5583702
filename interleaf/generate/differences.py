"""A difference asked of a table or a sentence ("how much higher", "the gap between"), worked out
from the two cells the question names (or two groups of columns' totals, or a sentence's two
percentages) and written beside them: "a difference of 14.7 (63.4 − 48.7)". The citation check
reads that form back (`WORKED_OUT`, `worked_out_holds`): a worked-out value is no number a quote
must state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from interleaf.generate.asking import Part
from interleaf.generate.sentences import EMPTY_CELLS, TableRow, content_words, numbers_in
from interleaf.generate.table_cells import (
    PRINTED_NUMBER,
    asked_columns,
    cell_of,
    label_columns,
    label_text,
    printed_value,
    side_rows,
)

# "the difference between", "the gap", "how much higher", "how many more", "by how much"
_DIFFERENCE = re.compile(
    r"\b(?:difference|gap)\b|\bhow\s+(?:much|many)\s+(?:more|less|fewer|higher|lower|greater|bigger|smaller|larger)\b"
    r"|\bby\s+how\s+much\b",
    re.I,
)


@dataclass(frozen=True)
class Difference:
    """A difference worked out from two cells of a table: `value` = |first − second|, to the
    places of the more precise of the two, which are written as the cells print them. `unit`: "%"
    when both cells print a percent sign, which the difference then carries too ("62.5%" − "40.1%"
    is a difference of 22.4%, as a reader writes it). Two groups of columns compared give their
    cells added up ("117 + 87" against "5 + 1": `_group_difference`)."""

    value: str
    first: str  # the larger side as printed: one cell, or a group's cells joined by " + "
    second: str
    unit: str = ""
    # where one of the two comes from another table than the chosen row's: that table's quote id, and
    # how the answer names the cell there ("Okapi-QA 58.1%", to which the writer adds the table's
    # place, "... in Table 2 (page 6)", and places the table); "" where both are the row's
    elsewhere: str = ""
    named: str = ""
    # the row's columns the difference adds up, where they are more than the asked ones
    # (`_group_difference`): the sentence gives each of them, under its header
    columns: tuple[int, ...] = ()

    def written(self) -> str:
        """How the answer states it: the difference, and the two cells it comes from."""
        u = self.unit
        other = f"; {self.named}" if self.named else ""
        # a group's total is its cells added: the smaller group's cells are each taken away
        second = f"{u} − ".join(self.second.split(" + "))
        return f"a difference of {self.value}{u} ({self.first}{u} − {second}{u}{other})"


def asks_difference(text: str) -> bool:
    return _DIFFERENCE.search(text) is not None


def difference(
    part: Part, rows: Sequence[TableRow], chosen: TableRow, elsewhere: Mapping[str, Sequence[TableRow]] | None = None
) -> Difference | None:
    """For a part asking how much two values differ: the chosen row's asked cell and the compared
    row's (`side_rows`) in the same column, or, with no row compared, the chosen row's two asked
    columns ("on CityQuests compared to WebTrivia History"), or its one asked column and the same
    row's in another table (`elsewhere`) that has the other column the part names. None where the
    tables do not give exactly two such numbers. A value's spread printed after it in brackets
    ("61.4% (0.7%)") is not a second number."""
    if not asks_difference(part.text) or max(len(r.cells) for r in rows) < 2:
        return None
    found = None
    labels = label_columns(rows)
    columns = asked_columns(rows, chosen, part, labels)
    others = side_rows(part, rows, chosen, labels)
    if len(columns) == 1 and others:
        cells = (cell_of(chosen, columns[0]), cell_of(others[0], columns[0]))
    elif not others and (sides := _column_groups(part, chosen, labels)) is not None:
        return _group_difference(chosen, sides)
    elif len(columns) == 2 and not others:
        cells = (cell_of(chosen, columns[0]), cell_of(chosen, columns[1]))
    elif len(columns) == 1 and (found := _same_row_elsewhere(part, chosen, labels, columns[0], elsewhere or {})):
        cells = (cell_of(chosen, columns[0]), found[0])
    else:
        return None
    cells = tuple(_SPREAD.sub("", c) for c in cells)
    printed = [PRINTED_NUMBER.findall(c) for c in cells]
    if any(len(numbers_in(c)) != 1 or len(p) != 1 or _SIGNED.search(c) for c, p in zip(cells, printed, strict=True)):
        return None  # not one plain number each (a signed value, a range: not worked out here)
    percent = all(re.search(rf"{PRINTED_NUMBER.pattern}\s*%", c) for c in cells)
    worked_out = _worked_out(printed[0][0], printed[1][0], "%" if percent else "")
    if found is None:
        return worked_out
    # the other table's cell named by its column, for the answer to say where it comes from
    return replace(worked_out, elsewhere=found[2], named=f"{found[1]} {cells[1]}")


def _column_groups(part: Part, row: TableRow, labels: list[int]) -> tuple[list[int], list[int]] | None:
    """The two groups of value columns a comparison names, where each side is named by the
    headers of several columns: "the Vireo sites compared to the Kestrel sites" over columns
    headed "Vireo 2019", "Vireo 2021", "Kestrel A", "Kestrel B". Every filled value column's header
    shares words with the question, those words split the columns in exactly two groups whose words
    differ, and one group has two columns or more (two single columns are `difference`'s own case).
    Else None."""
    asked = set(content_words(part.text))
    groups: dict[frozenset[str], list[int]] = {}
    for j, cell in enumerate(row.cells):
        if j in labels or cell in EMPTY_CELLS:
            continue
        shared = frozenset(asked & set(content_words(row.header[j] if j < len(row.header) else "")))
        if not shared:
            return None
        groups.setdefault(shared, []).append(j)
    if len(groups) != 2 or max(len(c) for c in groups.values()) < 2:
        return None
    (one, first), (two, second) = groups.items()
    return None if one & two else (first, second)


def _group_difference(row: TableRow, sides: tuple[list[int], list[int]]) -> Difference | None:
    """The difference of the two groups' totals (`_column_groups`), each cell one plain count: a
    share or a rate summed over columns is no share of anything, so percents are not summed.
    Worth on the MMLongBench-Doc dev half: one answerable question more right (of 234); the corpus
    dev sets do not move."""
    cells = [[_SPREAD.sub("", cell_of(row, j)) for j in side] for side in sides]
    printed = [[PRINTED_NUMBER.findall(c) for c in side] for side in cells]
    for side, found in zip(cells, printed, strict=True):
        for cell, numbers in zip(side, found, strict=True):
            if len(numbers_in(cell)) != 1 or len(numbers) != 1 or _SIGNED.search(cell) or "%" in cell:
                return None
    terms = [[p[0] for p in side] for side in printed]
    totals = [sum((printed_value(t) for t in side), Decimal(0)) for side in terms]
    places = max(len(t.partition(".")[2]) for side in terms for t in side)
    value = abs(totals[0] - totals[1]).quantize(Decimal(1).scaleb(-places))
    larger, smaller = (terms[0], terms[1]) if totals[0] >= totals[1] else (terms[1], terms[0])
    return Difference(f"{value:f}", " + ".join(larger), " + ".join(smaller), columns=tuple(sorted(sides[0] + sides[1])))


# a value's spread printed after it: "61.4% (0.7%)", "42.3(1.1)", "0.41 (±0.02)"
_SPREAD = re.compile(r"(?<=\S)\s*\(\s*(?:±|\+/-)?\s*\d[\d.,]*\s*%?\s*\)\s*$")


def _same_row_elsewhere(
    part: Part, chosen: TableRow, labels: list[int], column: int, elsewhere: Mapping[str, Sequence[TableRow]]
) -> tuple[str, str, str] | None:
    """(cell, its column's header, the table's quote id) of the row labelled as the chosen one is
    ("Kestrel-7B"), in the one other table whose column the part names, under another header than the
    chosen column's: the other side of a difference a question draws across two tables ("the
    recall of Kestrel-7B on Okapi-QA compared to Vireo-Bench"). Worth on the MMLongBench-Doc dev
    half: one answerable question more right (of 234); the corpus dev sets do not move."""
    own = label_text(chosen, labels).casefold()
    header = chosen.header[column] if column < len(chosen.header) else ""
    words = set(content_words(part.text))
    found = []
    for quote_id, table in elsewhere.items():
        table_labels = label_columns(table)
        for row in table:
            if not own or label_text(row, table_labels).casefold() != own:
                continue
            found += [
                (row.cells[j], row.header[j], quote_id)
                for j in asked_columns(table, row, part, table_labels)
                if j < len(row.header) and row.header[j] != header and words & set(content_words(row.header[j]))
            ]
    return found[0] if len(found) == 1 else None


def sentence_difference(part: Part, sentence: str) -> Difference | None:
    """For a part asking how much two values differ, answered by a sentence that states exactly two
    percentages besides the question's own ("61% of members vote … 35% stand for office"):
    their difference, as `difference` works out a table's. Only percentages: a sentence's plain
    numbers (a sample's size, a year, a count) are too often beside the two compared. Worth, on the
    dev half: one more answerable question right (a gap between two shares one sentence states); the
    corpus dev sets' answers do not move."""
    if not asks_difference(part.text):
        return None
    found = [m.group(1) for m in _PERCENT_VALUE.finditer(sentence) if not _SIGNED.match(m.group(0))]
    found = [n for n in dict.fromkeys(found) if numbers_in(n)[0] not in part.numbers]
    return _worked_out(found[0], found[1], "%") if len(found) == 2 else None


def _worked_out(one: str, two: str, unit: str) -> Difference:
    """|one − two|, the larger first, as printed ("80.0", "1,500"), to the places of the more precise."""
    first, second = sorted((one, two), key=printed_value, reverse=True)
    places = max(len(n.partition(".")[2]) for n in (first, second))
    value = abs(printed_value(first) - printed_value(second)).quantize(Decimal(1).scaleb(-places))
    return Difference(f"{value:f}", first, second, unit)


_VALUE = rf"({PRINTED_NUMBER.pattern})\s*%?"
# a value worked out as the answer writes it: a difference (`Difference.written`, "14.7 (63.4 − 48.7)"),
# a groups' difference ("12 (7 + 9 − 3 − 1)") and a total (totals.Total.written, "41 (24 + 12 + 5)");
# `worked_out_holds` checks its sum
WORKED_OUT = re.compile(rf"{_VALUE}\s*\(\s*((?:{_VALUE}\s*[+−–-]\s*)+{_VALUE})\s*\)")
_TERM = re.compile(rf"([+−–-]?)\s*{_VALUE}")


def worked_out_holds(m: re.Match[str]) -> bool:
    """Whether a WORKED_OUT match's result is its terms' sum, the first added and each after it
    added or taken away as its sign says, up to the sign of the whole."""
    terms = [(sign, printed_value(n)) for sign, n in _TERM.findall(m.group(2))]
    total = sum((-v if sign and sign != "+" else v for sign, v in terms), Decimal(0))
    return abs(total) == printed_value(m.group(1))


_SIGNED = re.compile(r"[-−–+]\s*\d")
# a percentage as a sentence states it: "59%", "47 percent", "a 12.5% share"; a sign before it makes
# it a change, matched here so that it is left out
_PERCENT_VALUE = re.compile(rf"[-−–+]?\s*({PRINTED_NUMBER.pattern})\s*(?:%|percent\b)", re.I)
