"""The grid of a table: positioned text in printed rows and columns (interleaf.describe.table_structure
says how the Markdown is built from it)."""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from interleaf.pdf.rules import Rules
from interleaf.pdf.words import Word

MAX_COLUMNS = 30
FULL_WIDTH = 0.6  # a rule this share of the table's width or more runs across it

NUMBER = re.compile(r"^[(\[]?[+\-−±]?\$?\d[\d.,]*(?:[eE][+\-−]?\d+)?%?[)\]]?[,;]?$")

# what data cells hold besides numbers: check marks, crosses, dashes for "none"
MARKS = frozenset({"X", "x", "✓", "✔", "✗", "✘", "×", "•", "●", "○", "-", "–", "—", "N/A", "n/a"})


def number_flags(text: str) -> list[bool]:
    """For each of the text's whitespace tokens, whether it is a number as a table cell prints one
    ("1,383", "(34)", "$6.31", "12%"): where a text states numbers, and how many."""
    return [NUMBER.match(token) is not None for token in text.split()]


def column_gap(rows: Sequence[Sequence[Word]]) -> float:
    """About one character's width (the median word height's 0.8): wider than the space between
    the words of one cell, the narrowest gap that separates two columns."""
    heights = sorted(w.y1 - w.y0 for row in rows for w in row)
    return max(heights[len(heights) // 2] * 0.8, 1.0)


def phrases(row: Sequence[Word], min_gap: float, walls: Sequence[float] = ()) -> int:
    """How many runs of words, each closer than a column gap to the next with no vertical rule
    (`walls`) between them, a printed row holds."""
    ordered = sorted(row, key=lambda w: w.x0)
    return 1 + sum(
        1 for a, b in itertools.pairwise(ordered) if b.x0 - a.x1 >= min_gap or any(a.cx < x < b.cx for x in walls)
    )


def column_bounds(rows: Sequence[Sequence[Word]], min_gap: float, span_tolerance: float = 0.15) -> list[float]:
    """x positions separating columns, left to right. A row of one phrase printed across the gaps
    the rows of several phrases leave (a group's heading over the table) would hide them: when the
    rows of several phrases are at least half of the rows, such a row is not counted (a phrase
    within one column, a label alone on its line, is)."""
    spread = [row for row in rows if phrases(row, min_gap) > 1]
    if len(spread) >= max(2, len(rows) / 2) and len(spread) < len(rows):
        gaps = _gap_bounds(spread, min_gap, span_tolerance)
        rows = [row for row in rows if row in spread or not any(row[0].x0 < b < row[-1].x1 for b in gaps)]
    return _gap_bounds(rows, min_gap, span_tolerance)


def _gap_bounds(rows: Sequence[Sequence[Word]], min_gap: float, span_tolerance: float) -> list[float]:
    items = [w for row in rows for w in row]
    if not items:
        return []
    left = int(min(w.x0 for w in items))
    right = int(max(w.x1 for w in items)) + 1
    coverage = [0] * (right - left + 1)
    for row in rows:
        covered = set()
        for w in row:
            covered.update(range(int(w.x0) - left, int(w.x1) - left + 1))
        for x in covered:
            coverage[x] += 1
    allowed = int(len(rows) * span_tolerance)
    bounds, start = [], None
    for x, count in enumerate(coverage):
        if count <= allowed:
            start = x if start is None else start
            continue
        if start is not None and x - start >= min_gap and start > 0:
            bounds.append(left + (start + x) / 2)
        start = None
    return bounds[: MAX_COLUMNS - 1]


def ruled_bounds(
    bounds: list[float], rules: Rules, extent: tuple[float, float], rows: Sequence[Sequence[Word]], min_gap: float
) -> list[float]:
    """Column bounds with the table's vertical rules that run (nearly) its whole height: a rule is
    a drawn column separator, and replaces the gap-found bounds next to it."""
    top, bottom = min(w.y0 for w in rows[0]), max(w.y1 for w in rows[-1])
    drawn = [
        s.at
        for s in rules.vertical
        if extent[0] + min_gap < s.at < extent[1] - min_gap
        and min(s.end, bottom) - max(s.start, top) >= FULL_WIDTH * (bottom - top)
    ]
    kept = [b for b in bounds if all(abs(b - x) > 2 * min_gap for x in drawn)]
    return sorted(kept + drawn)[: MAX_COLUMNS - 1]


@dataclass
class Line:
    """One printed row: its words and the words of each column."""

    words: list[Word]
    cells: list[list[Word]]
    label: str | None = None  # a row-group label given to it (first column)
    spanning: bool = False  # one phrase printed across columns: the heading of the rows below it
    continued: list[Line] = field(default_factory=list)  # lines its cells run onto

    @property
    def cy(self) -> float:
        return statistics.fmean((w.y0 + w.y1) / 2 for w in self.words)

    def text(self, col: int) -> str:
        own = " ".join(w.text for w in self.cells[col])
        more = [line.text(col) for line in self.continued]
        return " ".join(t for t in (own, *more) if t)

    @property
    def filled(self) -> set[int]:
        return {c for c, cell in enumerate(self.cells) if cell}

    def label_only(self) -> bool:
        return len(self.cells) >= 3 and self.filled == {0}

    def has_number(self) -> bool:
        """A cell beyond the first holding only numbers or marks (✓, X, -): a row of data, not of
        headings."""
        return any(cell and all(NUMBER.match(w.text) or w.text in MARKS for w in cell) for cell in self.cells[1:])


def crosses(item: Word, bounds: Sequence[float]) -> bool:
    return " " in item.text.strip() and any(item.x0 < b < item.x1 for b in bounds)


def split_across(item: Word, bounds: Sequence[float]) -> list[Word]:
    """An item of several words running across column bounds (an OCR line that read two cells as
    one) as its words, each boxed where its characters fall (proportionally: OCR gives no word
    boxes). Other items stay whole."""
    if not crosses(item, bounds):
        return [item]
    text, width = item.text, item.x1 - item.x0
    parts = []
    for match in re.finditer(r"\S+", text):
        x0 = item.x0 + width * match.start() / len(text)
        x1 = item.x0 + width * match.end() / len(text)
        parts.append(replace(item, x0=x0, x1=x1, text=match.group()))
    return parts


def column(x: float, bounds: Sequence[float]) -> int:
    return sum(1 for b in bounds if x > b)


def printed_lines(
    rows: list[list[Word]], bounds: list[float], min_gap: float | None = None, walls: Sequence[float] = ()
) -> list[Line]:
    """The rows' words by column (the one holding each word's centre). `min_gap`: a row of one
    phrase (`walls`: the vertical rules that end one) stays whole, in the column where it starts
    (a heading printed across the columns)."""
    lines = []
    for row in rows:
        cells: list[list[Word]] = [[] for _ in range(len(bounds) + 1)]
        whole = min_gap is not None and len(row) > 1 and phrases(row, min_gap, walls) == 1
        for w in row:
            cells[column(min(x.x0 for x in row) + 0.5 if whole else w.cx, bounds)].append(w)
        across = whole and len({column(w.cx, bounds) for w in row}) > 1
        lines.append(Line(row, cells, spanning=across))
    return lines
