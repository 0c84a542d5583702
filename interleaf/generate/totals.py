"""A total the question asks for, worked out from one table: "how many visits did A, B and C
receive in total?" is the sum of the A, B and C rows' cells; "how many items in total of the
Kestrel datasets?" the sum of the item row's cells under the columns whose header names Kestrel.

What is summed is what the question names, each item once:
- rows: each of two or more of the question's names is held by exactly one row label (a row holding
  two of them, a summary line, is none of the items); every other name of the question is printed
  by the table's quote (its caption, a column header, a chart's title: what is counted), so no
  named item the quote lacks is left out of the sum;
- columns: the chosen row's columns the answer writes, two or more but not all of them, each under a
  header holding one of the question's names (a group named by a shared name, or items named apart).
Each cell must print one plain number (a signed change or a range is not summed); the answer writes
the total with the cells it adds ("in total 41 (24 + 12 + 5)"), which value_check.py reads as
worked out, not quoted. Worth, on the dev half: two more answerable questions right (a total over
three named rows of a chart, one over two columns of a statistics table); the corpus dev sets'
answers do not move (a bare "total" read as asking for a sum added up two columns of a corpus
question that asked for a quantity the document prints: it is not read as one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from interleaf.generate.asking import Part
from interleaf.generate.offline_scoring import sums_up
from interleaf.generate.relevance import holds
from interleaf.generate.sentences import TableRow, numbers_in
from interleaf.generate.table_cells import PRINTED_NUMBER, asked_columns, label_columns, printed_value, row_label

# "in total", "the sum of", "combined", "altogether": a part asking for a sum. "Total" as a word
# ("what is the total current assets?", "at what total number of samples ...?") names a
# quantity the document prints, not a sum to work out.
_TOTAL = re.compile(r"\bin\s+total\b|\b(?:the\s+)?sum\s+of\b|\bcombined\b|\baltogether\b|\badd(?:ed)?\s+up\b", re.I)
_SIGNED = re.compile(r"[-−–+]\s*\d")


@dataclass(frozen=True)
class Total:
    """A sum worked out from a table's cells, written as the cells print them; `rows`: the rows
    summed besides the chosen one (written beside it), none where the columns of one row are."""

    value: str
    terms: tuple[str, ...]
    unit: str = ""
    rows: tuple[TableRow, ...] = ()

    def written(self) -> str:
        """The total as the terms print numbers (grouped by thousands where they are), then the terms."""
        u = self.unit
        value = f"{Decimal(self.value):,f}" if any("," in t for t in self.terms) else self.value
        return f"in total {value}{u} ({' + '.join(t + u for t in self.terms)})"


def asks_total(text: str) -> bool:
    return _TOTAL.search(text) is not None


def total(part: Part, rows: Sequence[TableRow], chosen: TableRow, printed: str = "") -> Total | None:
    """The total the part asks for over the rows (or the chosen row's columns) it names, or None
    where the table does not give each named item exactly one plain number (see the module
    docstring). `printed`: the rest of what the table's quote prints (caption, title, text)."""
    if not asks_total(part.text) or len(rows) < 2:
        return None
    labels = label_columns(rows)
    named = _named_rows(part, rows, labels, printed)
    if named and chosen in named:
        columns = asked_columns(rows, chosen, part, labels)
        if len(columns) != 1:
            return None
        others = tuple(r for r in named if r is not chosen)
        cells = [r.cells[columns[0]] if columns[0] < len(r.cells) else "" for r in (chosen, *others)]
        return _summed(cells, others)  # in the order the answer writes the rows
    columns = _named_columns(part, rows, chosen, labels)
    return _summed([chosen.cells[j] for j in columns], ()) if len(columns) >= 2 else None


def _named_rows(part: Part, rows: Sequence[TableRow], labels: list[int], printed: str) -> list[TableRow]:
    """The rows each of which alone holds one of the part's names, when two or more names are so
    held and every other name is the table's own (its column headers, or `printed`)."""
    names = [a for a in part.anchors if a.kind != "number"]
    members = [r for r in rows if not sums_up(r)]
    held = {id(r): [a for a in names if holds(a, row_label(r, labels))] for r in members}
    by_name: dict[str, list[TableRow]] = {}
    for r in members:
        if len(held[id(r)]) == 1:
            by_name.setdefault(held[id(r)][0].text, []).append(r)
    if len(by_name) < 2 or any(len(found) > 1 for found in by_name.values()):
        return []
    own = " ".join([printed, *(h for r in rows[:1] for h in r.header)])
    if any(a.text not in by_name and not holds(a, own) for a in names):
        return []  # a named item the table has no row for: its sum would leave it out
    return [found[0] for found in by_name.values()]


def _named_columns(part: Part, rows: Sequence[TableRow], row: TableRow, labels: list[int]) -> list[int]:
    """The columns the answer writes for the row (table_cells.asked_columns), when there are two or
    more, not every value column of the row, and each one's header holds one of the part's names:
    "Kestrel" of "Kestrel-small" and "Kestrel-large", or "Okapi" and "Vireo" of "Top-5 · Okapi" and
    "Top-5 · Vireo" (the cells added are the cells written, never another "Okapi" column)."""
    values = [j for j in range(len(row.cells)) if j not in labels and numbers_in(row.cells[j])]
    columns = asked_columns(rows, row, part, labels)
    names = [a for a in part.anchors if a.kind == "name"]
    if not 2 <= len(columns) < len(values):
        return []
    headers = [row.header[j] if j < len(row.header) else "" for j in columns]
    return columns if all(any(holds(a, h) for a in names) for h in headers) else []


def _summed(cells: Sequence[str], rows: tuple[TableRow, ...]) -> Total | None:
    printed = [PRINTED_NUMBER.findall(c) for c in cells]
    if any(len(numbers_in(c)) != 1 or len(p) != 1 or _SIGNED.search(c) for c, p in zip(cells, printed, strict=True)):
        return None
    terms = tuple(p[0] for p in printed)
    percent = all(re.search(rf"{PRINTED_NUMBER.pattern}\s*%", c) for c in cells)
    places = max(len(t.partition(".")[2]) for t in terms)
    value = sum((printed_value(t) for t in terms), Decimal(0)).quantize(Decimal(1).scaleb(-places))
    return Total(f"{value:f}", terms, "%" if percent else "", rows)
