"""A Markdown table from positioned text: the text layer's words or OCR line boxes.

Rows are clustered by vertical position (interleaf.pdf.rows.group_rows). Columns are found from the
horizontal gaps: an x position that (almost) no row covers separates two columns. Counting rows
rather than requiring *no* coverage keeps a header cell spanning several columns from merging
them. Each item then goes to the column holding its centre.
"""

from __future__ import annotations

from collections.abc import Sequence

from interleaf.pdf.rows import group_rows
from interleaf.pdf.words import Word

MAX_COLUMNS = 30


def column_bounds(rows: Sequence[Sequence[Word]], min_gap: float, span_tolerance: float = 0.15) -> list[float]:
    """x positions separating columns, left to right."""
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


def _cell(text: str) -> str:
    return text.replace("|", r"\|").replace("\n", " ").strip()


def markdown_table(items: Sequence[Word], min_gap: float | None = None) -> str | None:
    """The items as a Markdown table (first row as header), or None when there is no text."""
    rows = group_rows([w for w in items if w.text.strip()])
    if not rows:
        return None
    if min_gap is None:
        # About one character width: wider than the space between words of one cell.
        heights = sorted(w.y1 - w.y0 for row in rows for w in row)
        min_gap = max(heights[len(heights) // 2] * 0.8, 1.0)
    bounds = column_bounds(rows, min_gap)
    n_cols = len(bounds) + 1
    table = []
    for row in rows:
        cells: list[list[str]] = [[] for _ in range(n_cols)]
        for w in row:
            col = sum(1 for b in bounds if w.cx > b)
            cells[col].append(w.text)
        table.append([_cell(" ".join(c)) for c in cells])
    header, body = table[0], table[1:]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * n_cols]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)
