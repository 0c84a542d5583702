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
  "Polarization / resistance (Ω)"), and a header spanning several columns is put before each of
  them with " · " ("Top-100 · TREC"). Which columns a spanning header covers: those under a rule
  drawn beneath it within the header; else, for a first-row header with a sub-header of its own,
  the widest run of columns beside it headed only in the last row that it stands centred over,
  never across a vertical rule. A column with no header under a phrase printed across it and its
  neighbour ("Train" over two columns of numbers) takes that phrase.
- **Groups of rows.** Full-width rules cut the body into bands. In a band whose only first-column
  label is on a row of its own (printed centred beside the rows, as DPR's "Single" / "Multi"), or
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
    column_bounds,
    crosses,
    printed_lines,
    ruled_bounds,
    split_across,
)
from interleaf.describe.table_header import header_cells, header_size
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
    kept = [r for band in bands for r in _ruled_band(band)] if len(bands) > 1 else _unruled_band(lines)
    n_cols = len(lines[0].cells) if lines else 0
    rows = []
    for line in kept:
        cells = [line.text(c) for c in range(n_cols)]
        if line.label is not None and not cells[0]:
            cells[0] = line.label
        rows.append(cells)
    return rows


def markdown_table(items: Sequence[Word], min_gap: float | None = None, rules: Rules | None = None) -> str | None:
    """The items as ONE Markdown table with ONE header row, or None when there is no text.
    `rules`: the table's ruling lines in the items' frame (points, or the OCR image's pixels)."""
    rows = group_rows([w for w in items if w.text.strip()])
    if rows and len(rows) > 1 and caption_label(" ".join(w.text for w in rows[0])):
        rows = rows[1:]  # the caption the layout box took in ("Table 2-2 ..."): not a row of the table
    if not rows:
        return None
    rules = rules or Rules()
    if min_gap is None:
        # About one character width: wider than the space between words of one cell.
        heights = sorted(w.y1 - w.y0 for row in rows for w in row)
        min_gap = max(heights[len(heights) // 2] * 0.8, 1.0)
    extent = (min(w.x0 for row in rows for w in row), max(w.x1 for row in rows for w in row))
    width = extent[1] - extent[0]
    bounds = column_bounds(rows, min_gap)
    n_header = header_size(printed_lines(rows, bounds), rules, width)
    if n_header < len(rows):
        # the columns are the body's: a header line may run across the gaps its columns leave
        bounds = ruled_bounds(column_bounds(rows[n_header:], min_gap), rules, extent, rows, min_gap)
    if any(crosses(w, bounds) for row in rows for w in row):
        rows = group_rows([part for row in rows for w in row for part in split_across(w, bounds)])
    lines = printed_lines(rows, bounds)
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
