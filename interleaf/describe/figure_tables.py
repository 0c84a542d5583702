"""A table printed where the layout model saw a figure: its words stand on a grid.

The layout model's label is a hint, not the last word: a statistics page that is one long table,
a paper's table set as an image, a form, come out of it as figures. A figure region whose words
(text layer, else OCR lines) stand on a grid is read as a table as well (`figure_table`):
its quote keeps its kind and gains table Markdown, made by the same reader as a table quote's.

The grid: several printed rows of two cells or more (rows share a baseline, `group_rows`; cells
are cut at the gaps that almost no row covers, `column_bounds`), making up most of the rows, and
each column that holds cells in several of those rows aligned on one edge, its cells' left or
right edges (text, decimals) or centres at one x.

A chart is not a table, and its text does not stand on a grid: an axis's tick labels are one per
row (the y axis) or one row (the x axis), a legend and a title are a row each, and value labels
sit where their bars end, at no common edge. A chart with ticks on both sides (two y axes) has rows
of two aligned cells, but the plot area lies between them: a grid whose widest gap between two
columns takes most of its width is not a table, nor one with a column of a value axis's ticks
(numbers falling by one step down the rows). Nor is running text set in columns (a sidebar):
its cells hold a line's worth of words each, a table's a value or a short label.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Sequence

from interleaf.describe.table_grid import Line, column_bounds, column_gap, printed_lines
from interleaf.describe.table_structure import markdown_table
from interleaf.pdf.rows import group_rows
from interleaf.pdf.rules import Rules
from interleaf.pdf.words import Word

# Chosen by reading, not fitted (no labelled set of figure regions exists here), then checked on
# docs/'s 65 figures and the figures on the dev half's table and chart evidence pages, which
# `benchmarks/figure_tables.py` counts; three were set after looking at those pages (below).
MIN_GRID_ROWS = 4  # rows of two cells or more: fewer is an axis, a legend, a caption
MIN_GRID_SHARE = 0.5  # of the region's rows: the rest are a title, notes, a caption
MIN_ALIGNED = 0.8  # of a column's cells on one edge: a misread OCR box or a spanning cell may stray
MIN_COLUMN_CELLS = 3  # a column with fewer cells says nothing of alignment
MAX_GAP_SHARE = 0.5  # of the grid's width, the widest gap between two columns: wider is a plot area
# words in a cell, the median over the grid's cells: a table's cells are values and short labels,
# a column of running text (a sidebar set in two columns) holds a line's worth of words in each.
# Added after docs/: without it 8 figures of prose in two columns (sidebars, a glossary) were tables.
MAX_CELL_WORDS = 3
# of the Markdown's body cells, those holding something: a table's cells are mostly filled, while a
# chart's labels (a pie's slices, a line's data points) scatter over a grid that is mostly empty.
# Set on the dev half's evidence pages (dev, 15 figures): at 0.6 it took 3 of 4 charts out and 1 of
# 11 figures on table pages (0.49 filled); the remaining chart is 0.62 filled.
MIN_FILLED = 0.6
# fewer numbers falling by one step happen in a table by chance. Added after docs/: a raster figure
# of two line charts (read by OCR) passed every other test.
MIN_AXIS_TICKS = 4


def figure_table(items: Sequence[Word], rules: Rules) -> str | None:
    """A figure region's table Markdown, when its words stand on a grid and the table read from
    them has two columns or more and is mostly filled; else None."""
    if not stands_on_grid(items):
        return None
    table = markdown_table(items, rules=rules)
    if table is None:
        return None
    header, _rule, *body = table.split("\n")
    cells = [[c.strip() for c in row.strip().strip("|").split(" | ")] for row in body]
    if header.count(" | ") < 1 or len(body) < MIN_GRID_ROWS - 1:
        return None
    filled = sum(1 for row in cells for c in row if c) / max(sum(len(row) for row in cells), 1)
    return table if filled >= MIN_FILLED else None


def stands_on_grid(items: Sequence[Word]) -> bool:
    """Whether positioned words (a figure region's) make a table: see the module's docstring."""
    rows = group_rows([w for w in items if w.text.strip()])
    if len(rows) < MIN_GRID_ROWS:
        return False
    min_gap = column_gap(rows)  # as the table reader's
    bounds = column_bounds(rows, min_gap)
    if not bounds:
        return False
    lines = printed_lines(rows, bounds)
    if _value_axis(lines):
        return False
    grid = [line for line in lines if len(line.filled) >= 2]
    if len(grid) < MIN_GRID_ROWS or len(grid) < MIN_GRID_SHARE * len(lines):
        return False
    words = [sum(len(w.text.split()) for w in cell) for line in grid for cell in line.cells if cell]
    if statistics.median(words) > MAX_CELL_WORDS:  # an OCR line is one item of several words
        return False
    spans = []
    for c in range(len(bounds) + 1):
        cells = [line.cells[c] for line in grid if line.cells[c]]
        if not cells:
            continue
        spans.append((min(w.x0 for cell in cells for w in cell), max(w.x1 for cell in cells for w in cell)))
        if len(cells) >= MIN_COLUMN_CELLS and _aligned(cells, min_gap) < MIN_ALIGNED:
            return False
    width = spans[-1][1] - spans[0][0]
    widest = max((b[0] - a[1] for a, b in itertools.pairwise(spans)), default=0.0)
    return len(spans) >= 2 and widest < MAX_GAP_SHARE * width


def _value_axis(lines: Sequence[Line]) -> bool:
    """Whether a column reads, top to bottom, as a value axis's ticks: four numbers or more in a
    row, each the last word of its cell, falling by one step ("0,9 0,8 … 0"; "100 80 … 0"). A
    table's column of numbers going down by a constant step is rare; its years and ranks go up."""
    for c in range(len(lines[0].cells) if lines else 0):
        ticks = [v for v in (_last_number(line.text(c)) for line in lines) if v is not None]
        run = 1
        for a, b, before in zip(ticks[1:], ticks[2:], ticks, strict=False):
            step, prior = b - a, a - before
            run = run + 1 if step < 0 and math.isclose(step, prior, rel_tol=1e-6) else 1
            if run + 2 >= MIN_AXIS_TICKS:
                return True
    return False


def _last_number(text: str) -> float | None:
    """The number a cell ends with ("score-b 0,5": 0.5; "1,200": 1200), or None."""
    words = text.split()
    if not words:
        return None
    word = words[-1].rstrip("%")
    word = word.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", word) else word.replace(",", ".")
    try:
        return float(word)
    except ValueError:
        return None


def _aligned(cells: Sequence[Sequence[Word]], tolerance: float) -> float:
    """The largest share of `cells` whose left edges, right edges or centres lie within
    `tolerance` of that edge's median."""
    best = 0.0
    for edge in (
        [min(w.x0 for w in cell) for cell in cells],
        [max(w.x1 for w in cell) for cell in cells],
        [(min(w.x0 for w in cell) + max(w.x1 for w in cell)) / 2 for cell in cells],
    ):
        middle = statistics.median(edge)
        best = max(best, sum(abs(x - middle) <= tolerance for x in edge) / len(edge))
    return best
