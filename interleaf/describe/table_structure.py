"""A Markdown table from positioned text (the text layer's words or OCR line boxes) and, where the
table is drawn with them, its ruling lines (interleaf.pdf.rules).

The Markdown keeps what the printed table means, as ONE pipe table with ONE header row (the answer
composer and the index read it that way):

- **Rows** are clustered by vertical position (interleaf.pdf.rows.group_rows); **columns** from
  the horizontal gaps of the body's rows (a header line may run across the gaps its columns
  leave): an x position that (almost) no row covers separates two columns. Counting
  rows rather than requiring *no* coverage keeps a header cell spanning several columns from
  merging them. A body word goes to the column holding its centre; a header phrase (words closer
  than a column gap) goes whole to the column holding its centre.
- **The header** is the rows above the first full-width rule below the first row, when none of them
  holds a number or a mark (✓, X, -); else the leading rows before the first row holding one (at
  least one row). A caption the layout box took in ("Table 2-2 ...") is not a row. A header of
  several rows becomes one row: a column's own lines are joined with a space (a wrapped
  "Tensile / strength (MPa)"), and a header spanning several columns is put before each of
  them with " · " ("Top-50 · FAQ"). Which columns a spanning header covers: those under a rule
  drawn beneath it within the header; else, for a first-row header with a sub-header of its own,
  the widest run of columns beside it headed only in the last row that it stands centred over,
  never across a vertical rule. A column with no header under a phrase printed across it and its
  neighbour ("Train" over two columns of numbers) takes that phrase.
- **Groups of rows.** Full-width rules cut the body into bands. In a band whose only first-column
  label is on a row of its own (printed centred beside the rows, as a "Solo" / "Joint" often is), or
  on one of its rows, the label is repeated on every row of the band; but a band whose label is on
  its first line, followed by sparse lines or lines without numbers, is one row whose cells ran
  onto several lines. Without rules, a label on a row of its own squeezed between two rows (less
  than 3/4 of the row pitch from each) labels as many rows below as above it; one at a full pitch
  labels the rows after it that have no label of their own.
- **Columns drawn with rules** (a vertical rule running the table's height) are taken from the
  rules. An OCR line of several words running across a column bound (two cells read as one line)
  is split into its words, each placed where its characters fall.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from interleaf.describe.table_grid import (
    FULL_WIDTH,
    Line,
    column,
    column_bounds,
    column_gap,
    crosses,
    printed_lines,
    ruled_bounds,
    split_across,
)
from interleaf.describe.table_header import GROUP_JOIN, header_cells, header_size
from interleaf.pdf.rows import group_rows
from interleaf.pdf.rules import Rules
from interleaf.pdf.words import Word
from interleaf.text.references import caption_label

SQUEEZED = 0.75  # a label row nearer than this share of the row pitch to both neighbours sits between them

__all__ = ["column_bounds", "markdown_table"]


def _cell(text: str) -> str:
    return text.replace("|", r"\|").replace("\n", " ").strip()


def _bands(lines: list[Line], rules: Rules, width: float) -> list[list[Line]]:
    """The body cut at full-width rules (one band when there are none inside it)."""
    cuts = sorted(s.at for s in rules.horizontal if s.length >= FULL_WIDTH * width)
    bands: dict[int, list[Line]] = {}
    for line in lines:
        bands.setdefault(sum(1 for y in cuts if y < line.cy), []).append(line)
    return [bands[k] for k in sorted(bands)]


def _ruled_band(band: list[Line]) -> list[Line]:
    labelled = [line for line in band if line.cells[0]]
    if len(band) < 2 or len(labelled) != 1 or len(band[0].cells) < 3:
        return band
    (head,) = labelled
    others = [line for line in band if line is not head]
    if head.label_only():
        for line in others:
            line.label = head.text(0)
        return others
    # one row whose cells ran onto more lines: the label on its first line, the lines below sparse
    # or without numbers (rows of their own under a top-aligned label are full of them)
    if head is band[0] and all(len(o.filled) * 2 < len(head.filled) or not o.has_number() for o in others):
        head.continued = others
        return [head]
    for line in others:
        line.label = head.text(0)
    return band


def _one_row(band: list[Line]) -> list[Line]:
    head, *more = band
    head.continued = more
    return [head]


def _unruled_band(band: list[Line]) -> list[Line]:
    gaps = [b.cy - a.cy for a, b in itertools.pairwise(band) if not (a.label_only() or b.label_only())]
    pitch = statistics.median(gaps) if gaps else 0.0
    consumed: set[int] = set()
    for i, line in enumerate(band):
        if not line.label_only() or id(line) in consumed:
            continue
        free = [not o.cells[0] and o.label is None and not o.label_only() for o in band]
        up = band[i].cy - band[i - 1].cy if i > 0 else pitch
        down = band[i + 1].cy - band[i].cy if i + 1 < len(band) else pitch
        label = line.text(0)
        if pitch and up < SQUEEZED * pitch and down < SQUEEZED * pitch:
            above = _run(free, range(i - 1, -1, -1))
            below = _run(free, range(i + 1, len(band)))
            k = min(len(above), len(below))
            chosen = above[:k] + below[:k]
        else:
            chosen = _run(free, range(i + 1, len(band)))
        for j in chosen:
            band[j].label = label
        if chosen:
            consumed.add(id(line))
    return [line for line in band if id(line) not in consumed]


def _run(free: list[bool], indices: range) -> list[int]:
    out = []
    for j in indices:
        if not free[j]:
            break
        out.append(j)
    return out


def body_rows(lines: list[Line], rules: Rules, width: float) -> list[list[str]]:
    bands = _bands(lines, rules, width)
    # rules drawn between the rows themselves (not only around the header and a total): a band of
    # text lines (rows of data are full of numbers; a text row may hold one, a phone number or a
    # year) is one row whose cells, its first column's label too, ran onto several lines
    between_rows = len(bands) >= 3
    kept = [
        r
        for band in bands
        for r in (
            _one_row(band) if between_rows and 2 * sum(x.has_number() for x in band) < len(band) else _ruled_band(band)
        )
    ]
    if len(bands) == 1:
        kept = _unruled_band(lines)
    n_cols = len(lines[0].cells) if lines else 0
    rows = []
    heading = None  # the last heading printed across the columns: the rows below it are its group
    for line in kept:
        cells = [line.text(c) for c in range(n_cols)]
        if line.spanning and n_cols > 1:
            heading = cells[0]
            continue
        if line.label is not None and not cells[0]:
            cells[0] = line.label
        if heading:
            cells[0] = f"{heading}{GROUP_JOIN}{cells[0]}" if cells[0] else heading
        rows.append(cells)
    return rows


def _stands_in_columns(line: Sequence[Word], bounds: Sequence[float], min_gap: float) -> bool:
    """Whether a printed line is a row of the table whose columns are `bounds`: two phrases or more,
    each within one column, in different columns (a sentence or a caption is one phrase)."""
    runs: list[list[Word]] = []
    for w in sorted(line, key=lambda w: w.x0):
        if runs and w.x0 - runs[-1][-1].x1 < min_gap:
            runs[-1].append(w)
        else:
            runs.append([w])
    columns = [{column(w.cx, bounds) for w in run} for run in runs]
    return (
        len(runs) >= 2
        and not caption_label(" ".join(w.text for w in line))
        and all(len(c) == 1 for c in columns)
        and len(set().union(*columns)) == len(runs)
        and not any(any(w.x0 < b < w.x1 for b in bounds) for w in line)
    )


def markdown_table(
    items: Sequence[Word], min_gap: float | None = None, rules: Rules | None = None, above: Sequence[Word] = ()
) -> str | None:
    """The items as ONE Markdown table with ONE header row, or None when there is no text.
    `rules`: the table's ruling lines in the items' frame (points, or the OCR image's pixels).
    `above`: the line printed just above the items (a layout box often leaves a table's header
    row out); it is taken as the table's first row when its phrases stand in the items' columns."""
    rows = group_rows([w for w in items if w.text.strip()])
    if rows and len(rows) > 1 and caption_label(" ".join(w.text for w in rows[0])):
        rows = rows[1:]  # the caption the layout box took in ("Table 2-2 ..."): not a row of the table
    if not rows:
        return None
    rules = rules or Rules()
    if min_gap is None:
        min_gap = column_gap(rows)
    if above and _stands_in_columns(above, column_bounds(rows, min_gap), min_gap):
        rows = [sorted(above, key=lambda w: w.x0), *rows]
    extent = (min(w.x0 for row in rows for w in row), max(w.x1 for row in rows for w in row))
    width = extent[1] - extent[0]
    bounds = column_bounds(rows, min_gap)
    n_header = header_size(printed_lines(rows, bounds), rules, width)
    if n_header < len(rows):
        # the columns are the body's: a header line may run across the gaps its columns leave
        bounds = ruled_bounds(column_bounds(rows[n_header:], min_gap), rules, extent, rows, min_gap)
    if any(crosses(w, bounds) for row in rows for w in row):
        rows = group_rows([part for row in rows for w in row for part in split_across(w, bounds)])
    walls = [r.at for r in rules.vertical]
    lines = printed_lines(rows[:n_header], bounds) + printed_lines(rows[n_header:], bounds, min_gap, walls)
    spans = [
        (
            min((w.x0 for x in lines[n_header:] for w in x.cells[c]), default=0.0),
            max((w.x1 for x in lines[n_header:] for w in x.cells[c]), default=0.0),
        )
        for c in range(len(bounds) + 1)
    ]
    header = header_cells(lines[:n_header], bounds, rules, min_gap, extent, spans)
    body = body_rows(lines[n_header:], rules, width)
    keep = [c for c in range(len(header)) if header[c] or any(r[c] for r in body)]
    table = [[_cell(r[c]) for c in keep] for r in [header, *body]]
    lines_md = ["| " + " | ".join(table[0]) + " |", "|" + "---|" * len(keep)]
    lines_md += ["| " + " | ".join(r) + " |" for r in table[1:]]
    return "\n".join(lines_md)
