"""The header of a table as ONE row: which printed rows are the header, and each column's text,
with a header spanning several columns put before each of them (interleaf.describe.table_structure
says the rules)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from interleaf.describe.table_grid import FULL_WIDTH, Line, column
from interleaf.pdf.rules import Rules, Segment
from interleaf.pdf.words import Word

MAX_HEADER_ROWS = 8
GROUP_JOIN = " · "


def _phrases(words: Sequence[Word], min_gap: float, walls: Sequence[float]) -> list[list[Word]]:
    """Runs of words closer together than a column gap with no vertical rule (`walls`) between
    them: one header cell's text on one line. (A column bound found from gaps does not split a
    phrase: a wrapped header is often wider than its column.)"""
    out: list[list[Word]] = []
    for w in sorted(words, key=lambda w: w.x0):
        last = out[-1][-1] if out else None
        if last and w.x0 - last.x1 < min_gap and not any(last.cx < x < w.cx for x in walls):
            out[-1].append(w)
        else:
            out.append([w])
    return out


def header_size(lines: Sequence[Line], rules: Rules, width: float) -> int:
    """How many of the leading printed rows are the header (at least one)."""
    if len(lines) < 2:
        return len(lines)
    top = min(w.y0 for w in lines[0].words)
    first_cy = lines[0].cy
    for rule in sorted((s for s in rules.horizontal if s.length >= FULL_WIDTH * width), key=lambda s: s.at):
        if rule.at <= first_cy or rule.at <= top:
            continue  # the table's top border
        above = sum(1 for line in lines if line.cy < rule.at)
        # rows holding numbers above the rule are data (a table whose header the crop left out)
        if 1 <= above <= MAX_HEADER_ROWS and above < len(lines) and not any(x.has_number() for x in lines[:above]):
            return above
        break
    for i, line in enumerate(lines[: MAX_HEADER_ROWS + 1]):
        if line.has_number():
            return max(i, 1)
    return 1


@dataclass
class _Phrase:
    row: int
    col: int
    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def cx(self) -> float:
        return (min(w.x0 for w in self.words) + max(w.x1 for w in self.words)) / 2

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)


def _column_centres(bounds: Sequence[float], left: float, right: float) -> list[float]:
    edges = [left, *bounds, right]
    return [(a + b) / 2 for a, b in itertools.pairwise(edges)]


def header_cells(
    lines: Sequence[Line],
    bounds: list[float],
    rules: Rules,
    min_gap: float,
    extent: tuple[float, float],
    body_spans: Sequence[tuple[float, float]] = (),
) -> list[str]:
    """One text per column from the header's printed rows (see the module docstring);
    `body_spans`: each column's x extent in the body."""
    n_cols = len(bounds) + 1
    phrases = [
        _Phrase(r, column((p[0].x0 + p[-1].x1) / 2, bounds), p)
        for r, line in enumerate(lines)
        for p in _phrases(line.words, min_gap, [v.at for v in rules.vertical])
    ]
    centres = _column_centres(bounds, *extent)
    groups: dict[int, list[_Phrase]] = {c: [] for c in range(n_cols)}
    bottom = max(w.y1 for w in lines[-1].words)
    top = min(w.y0 for w in lines[0].words)
    width = extent[1] - extent[0]
    # a rule drawn under a header inside the header, not across the table: it spans the columns below it
    for rule in rules.horizontal:
        if not (top < rule.at < bottom) or rule.length >= FULL_WIDTH * width:
            continue
        under = [c for c in range(n_cols) if rule.start <= centres[c] <= rule.end]
        above = [p for p in phrases if p.y1 <= rule.at + 1 and rule.start <= p.cx <= rule.end]
        nearest = [p for p in above if p.row == max(q.row for q in above)]
        if len(under) >= 2 and len(nearest) == 1:  # several phrases over it: each heads its own column
            for c in under:
                groups[c] += [p for p in nearest if p not in groups[c]]
    # a first-row header with a sub-header of its own spans the widest run of columns around it
    # headed only in the last row that it stands centred over, not across a vertical rule
    if len(lines) >= 2:
        last = len(lines) - 1
        rows_of = {c: {p.row for p in phrases if p.col == c} for c in range(n_cols)}
        orphans = {c for c in range(n_cols) if rows_of[c] == {last} and not groups[c]}
        edges = [extent[0], *bounds, extent[1]]
        for parent in sorted((p for p in phrases if p.row == 0 and rows_of[p.col] - {0}), key=lambda p: p.cx):
            span = _centred_span(parent, orphans, edges, rules.vertical, top, bottom)
            if len(span) > 1:
                orphans -= set(span)
                for c in span:
                    groups[c].append(parent)
    texts = []
    for c in range(n_cols):
        above = sorted(groups[c], key=lambda p: p.row)
        own = " ".join(p.text for p in sorted(phrases, key=lambda p: p.row) if p.col == c and p not in above)
        texts.append(GROUP_JOIN.join([*(p.text for p in above), *([own] if own else [])]))
    # a column left without a header, under a phrase printed across it and its neighbour ("Train"
    # over two columns of numbers): that phrase heads it too
    for c, (lo, hi) in enumerate(body_spans):
        if texts[c] or hi <= lo:
            continue
        over = [p for p in phrases if abs(p.col - c) == 1 and min(p.words[-1].x1, hi) - max(p.words[0].x0, lo) > 0]
        if len(over) == 1:
            texts[c] = texts[over[0].col]
    return texts


def _centred_span(
    parent: _Phrase, free: set[int], edges: Sequence[float], vertical: Sequence[Segment], top: float, bottom: float
) -> list[int]:
    """The widest run of columns, the parent's own and free ones beside it, whose middle lies within
    half the narrowest column's width of the parent's centre (a spanning header is centred)."""
    best: list[int] = [parent.col]
    n = len(edges) - 1
    lo = parent.col
    while lo - 1 >= 0 and lo - 1 in free:
        lo -= 1
    hi = parent.col
    while hi + 1 < n and hi + 1 in free:
        hi += 1
    for a in range(lo, parent.col + 1):
        for b in range(parent.col, hi + 1):
            middle = (edges[a] + edges[b + 1]) / 2
            narrowest = min(edges[c + 1] - edges[c] for c in range(a, b + 1))
            walls = _crossed(vertical, (edges[a] + edges[a + 1]) / 2, (edges[b] + edges[b + 1]) / 2, top, bottom)
            if b - a + 1 > len(best) and abs(parent.cx - middle) <= narrowest / 2 and not walls:
                best = list(range(a, b + 1))
    return best


def _crossed(vertical: Sequence[Segment], xa: float, xb: float, top: float, bottom: float) -> bool:
    lo, hi = sorted((xa, xb))
    return any(lo < s.at < hi and s.start < bottom and s.end > top for s in vertical)
