"""A table answered as cells: the row(s) and column(s) a question names, as one sentence with the
value and its labels ("Table 2 (page 5) gives Top-50 · FAQ 90.6 for Joint, Okapi + Kestrel"), never the
whole table.

A table's leading columns that hold names rather than measurements label its rows (a concentration
"8" is a label; "0.2715" is a measurement); the other columns hold values. The columns asked for
are those whose header holds the most of the question's anchors and words ("Top-50 · FAQ" for
"Top-50 ... ArchivedFAQ"); when no header shares anything with the question the row is given
whole. A comparison ("compared with no additive", "than X", "X vs Y") also gives the row of the
other side; "no X" / "without X" is the table's baseline row (0, none, blank, control). A question
asking how much two values differ ("how much higher", "the gap between") gets the difference worked
out from the two cells, written beside them (differences.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from interleaf.evidence import fold
from interleaf.expand.rules import BETWEEN
from interleaf.generate.asking import Part
from interleaf.generate.relevance import holds, tokens
from interleaf.generate.sentences import EMPTY_CELLS, TableRow, content_words

if TYPE_CHECKING:  # totals.py and differences.py read this module's cells
    from interleaf.generate.differences import Difference
    from interleaf.generate.totals import Total

_MEASUREMENT = re.compile(r"\d[.,]\d|\d\s?%|^\s*[-−–]?\d+(?:\.\d+)?[eE][-+]?\d+\s*$")
_SIDE = re.compile(
    r"\b(?:compared\s+(?:with|to)|than|versus|vs\.?|relative\s+to|against|beats?|outperforms?|exceeds?)"
    r"\s+(.+?)(?:[?,;]|\s+(?:in|on|at|for|by)\s|$)",
    re.I,
)
_NONE_SIDE = re.compile(r"^(?:no|without|absence\s+of|zero)\b", re.I)
_BASELINE = frozenset({"0", "none", "no", "blank", "control", "w/o", "baseline", "-", "—", "–", "0 g", "nil"})


def label_columns(rows: Sequence[TableRow]) -> list[int]:
    """The leading columns whose cells name the row: no cell of them is a measurement."""
    width = max((len(r.cells) for r in rows), default=0)
    if not any(_MEASUREMENT.search(c) for r in rows for c in r.cells):
        return [0]  # a table of text: its first column names the row
    out = []
    for j in range(width - 1):
        cells = [r.cells[j] for r in rows if j < len(r.cells) and r.cells[j] not in EMPTY_CELLS]
        if any(_MEASUREMENT.search(c) for c in cells):
            break
        out.append(j)
    return out or [0]


_REMARK = re.compile(r"\s*\([^()]*\)\s*$")


def without_remark(label: str) -> str:
    """A label without its closing remark: "Model-B + Reflect (ours)" is "Model-B + Reflect"
    (the remark, "(ours)" or "(Smith et al., 2021)", is no part of the name a question uses)."""
    return _REMARK.sub("", label)


def label_chars_stated(row: TableRow, asked: str) -> int:
    """How much of a row's label cells (those with letters: "K.+Okapi(2)" is a label, "128+256" and
    "58.9" are values) the question, folded (`interleaf.evidence.fold`), states, in characters,
    counting a cell only where it is stated whole, with or without its closing remark: "Model-B +
    Reflect" states more of "Model-B + Reflect (ours)" than of "Model-B", "K.+Okapi(2)" more of
    its own row than of the "Okapi" row, and none of "Okapi + Kestrel" is stated by a question naming "Okapi"."""
    stated = 0
    for cell in (c for c in (*row.cells, row.group) if _LETTER.search(c)):
        for form in dict.fromkeys((fold(cell), fold(without_remark(cell)))):
            if form and re.search(rf"(?<!\w){_inflected(form)}(?!\w)", asked):
                stated += len(form)
                break
    return stated


_LETTER = re.compile(r"[^\W\d_]")


def _inflected(label: str) -> str:
    """A pattern for a label as a question may write it, singular or plural: the row "Retiree" is
    stated by "how many retirees", the row "Tenants" by "what share of tenant households". On
    the dev half, one part of a three-group question is then answered from its table's row instead
    of a sentence; no answer's correctness moves, nor do the corpus dev sets'."""
    stem = label[:-1] if len(label) > 3 and label.endswith("s") and label[-2].isalpha() else label
    return rf"{re.escape(stem)}(?:e?s)?" if stem[-1].isalpha() else re.escape(label)


def asked_columns(rows: Sequence[TableRow], row: TableRow, part: Part, labels: list[int]) -> list[int]:
    """The value columns of `row` whose header shares the most with the question part (an anchor
    counts two, a word one); every filled value column when none shares anything."""
    words = set(content_words(part.text))
    scores: dict[int, float] = {}
    for j, cell in enumerate(row.cells):
        if j in labels or cell in EMPTY_CELLS:
            continue
        header = row.header[j] if j < len(row.header) else ""
        score = 2.0 * sum(holds(a, header) for a in part.anchors if a.kind != "number")
        score += len(words & set(content_words(header)))
        scores[j] = score
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return sorted(scores)
    return [j for j, s in scores.items() if s == best]


def side_rows(part: Part, rows: Sequence[TableRow], chosen: TableRow, labels: list[int]) -> list[TableRow]:
    """For a comparison, the row of the other side ("compared with no additive": the 0 row)."""
    others = [r for r in rows if r is not chosen]
    m = _SIDE.search(part.text)
    between = BETWEEN.search(part.text) if m is None else None
    if m is None and between is None:
        return []
    if between is not None:  # "the difference between X and Y": the side the chosen row is not
        one, two = (set(tokens(g)) for g in between.groups())
        own = set(tokens(label_text(chosen, labels)))
        side = between.group(2) if len(own & one) >= len(own & two) else between.group(1)
    else:
        side = m.group(1).strip()
    if _NONE_SIDE.match(side):
        base = [r for r in others if label_text(r, labels).casefold() in _BASELINE]
        return base[:1]
    wanted = set(tokens(side))
    # the row sharing the most of the side's words, and of those the one with the fewest others:
    # "compared to Model-B" is the "Model-B" row, not "Model-B + RAG"
    scored = [(len(wanted & (have := set(tokens(label_text(r, labels))))), -len(have - wanted), r) for r in others]
    best = max(((n, extra) for n, extra, _ in scored), default=(0, 0))
    return [r for n, extra, r in scored if (n, extra) == best][:1] if best[0] else []


# a number as a table prints it ("1,500", "80.0")
PRINTED_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def printed_value(printed: str) -> Decimal:
    """A PRINTED_NUMBER's value."""
    return Decimal(printed.replace(",", ""))


def cell_of(row: TableRow, column: int) -> str:
    return row.cells[column] if column < len(row.cells) else ""


def label_text(row: TableRow, labels: list[int]) -> str:
    cells = [row.cells[j] for j in labels if j < len(row.cells) and row.cells[j] not in EMPTY_CELLS]
    return " ".join(cells).strip()


def row_label(row: TableRow, labels: list[int]) -> str:
    """The row's label as one string: its group label ("Vireo-7B" over "+ Plain"), then its label
    cells."""
    return " ".join(filter(None, [row.group, label_text(row, labels)]))


def _labels(row: TableRow, labels: list[int]) -> str:
    """How the sentence names the row: its label cells (a bare number with its column's header:
    "Dopant concentration (mg) 8"), after its group label."""
    out = [row.group] if row.group else []
    for j in labels:
        cell = row.cells[j] if j < len(row.cells) else ""
        if cell in EMPTY_CELLS or cell in out:
            continue
        header = row.header[j] if j < len(row.header) else ""
        out.append(f"{header} {cell}".strip() if re.fullmatch(r"[-−]?[\d.,]+\s*%?", cell) else cell)
    return ", ".join(out)


def _values(row: TableRow, columns: list[int]) -> str:
    out = []
    for j in columns:
        header = row.header[j] if j < len(row.header) else ""
        cell = row.cells[j].rstrip(" .")  # the sentence goes on after it
        out.append(f"{header} {cell}".strip() if header and header != cell else cell)
    return "; ".join(out)  # not ", ": "43,512, 61,907" reads as one number


def cell_sentence(
    where: str,
    rows: Sequence[TableRow],
    chosen: TableRow,
    part: Part,
    compared: Sequence[TableRow] = (),
    worked_out: Difference | Total | None = None,
    also: Sequence[Part] = (),
    columns: Sequence[int] = (),
) -> str:
    """One sentence: where, the value(s) asked for with their column, the row(s) they belong to and,
    when the part asks how much they differ, `worked_out` (`difference`). `also`: the other parts
    answered from the same row, whose columns the sentence gives too ("NQ 59.1; TriviaQA 66.9 for
    BM25", not one sentence per column). `columns`: the columns to give instead of the asked ones, where
    the worked-out value adds up more (`Difference.columns`)."""
    if max(len(r.cells) for r in rows) < 2:  # a table read as one column: the rows as they read
        return f"{where} gives " + "; and ".join(r.as_text() for r in (chosen, *compared))
    labels = label_columns(rows)
    if not columns:
        columns = list(dict.fromkeys(j for p in (part, *also) for j in asked_columns(rows, chosen, p, labels)))
    compared = [*compared, *(r for r in side_rows(part, rows, chosen, labels) if r not in compared)]
    clauses = [_clause(chosen, columns, labels)]
    for other in compared:
        filled = [j for j in columns if j < len(other.cells) and other.cells[j] not in EMPTY_CELLS]
        if filled:
            clauses.append(_clause(other, filled, labels))
    tail = f", {worked_out.written()}" if worked_out else ""
    return f"{where} gives " + "; and ".join(clauses) + tail


def _clause(row: TableRow, columns: list[int], labels: list[int]) -> str:
    """ "Top-5 · CQ 69.8 for Okapi + Kestrel": the row's asked values, and the labels it has, if any."""
    named = _labels(row, labels)
    return f"{_values(row, columns)} for {named}" if named else _values(row, columns)


# "Zernike Net [31] (Z)": a table's legend, a name and the code its cells use for it
_LEGEND = re.compile(r"((?:[A-Z][\w-]*\s+){0,3}[A-Z][\w-]*)\s*(?:\[\d+\]\s*)?\(([A-Z][A-Za-z0-9]{0,2})\)")


def with_legend(sentence: str, legend: str, cells: Sequence[str]) -> str:
    """The sentence with the codes its cells use spelled out from the table's legend: "... Billboard
    [12] Z - Layouts ... (Z: Zernike Net)". A header's unit ("Potential (V)") is no code."""
    found = {code: name for name, code in _LEGEND.findall(" ".join(legend.split())) if name != code}
    used = [c for c in found if any(re.search(rf"(?<![\w/(]){re.escape(c)}(?![\w/)])", cell) for cell in cells)]
    return sentence + "".join(f" ({c}: {found[c]})" for c in used)
