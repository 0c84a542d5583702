"""Reading order for one page: headers, then column by column between full-width bands, footers.

A block wider than the gutter (it crosses the page's middle) cuts the page into bands; within a
band, left-column blocks come before right-column ones, each top to bottom. This is the simple
case of XY-cut and covers one- and two-column documents, which is what reports and papers are.
"""

from __future__ import annotations

from typing import Protocol


class Box(Protocol):
    kind: str
    x0: float
    y0: float
    x1: float
    y1: float


def reading_order(blocks: list[Box], page_width: float, left: float = 0.0) -> list[Box]:
    """The blocks of a page spanning `left` to `left + page_width` (one printed page of a spread is
    half of its sheet: layout/spread.py) in reading order."""
    headers = sorted((b for b in blocks if b.kind == "header"), key=lambda b: (b.y0, b.x0))
    footers = sorted((b for b in blocks if b.kind == "footer"), key=lambda b: (b.y0, b.x0))
    body = [b for b in blocks if b.kind not in ("header", "footer")]
    mid = left + page_width / 2
    margin = 0.03 * page_width

    def spans(b: Box) -> bool:
        return b.x0 < mid - margin and b.x1 > mid + margin

    two_columns = (
        sum(1 for b in body if not spans(b)) >= 2
        and any((b.x0 + b.x1) / 2 > mid for b in body if not spans(b))
        and any((b.x0 + b.x1) / 2 < mid for b in body if not spans(b))
    )
    if not two_columns:
        return headers + sorted(body, key=lambda b: (round(b.y0, 0), b.x0)) + footers

    ordered: list[Box] = []
    band: list[Box] = []

    def flush() -> None:
        left = sorted((b for b in band if (b.x0 + b.x1) / 2 < mid), key=lambda b: (b.y0, b.x0))
        right = sorted((b for b in band if (b.x0 + b.x1) / 2 >= mid), key=lambda b: (b.y0, b.x0))
        ordered.extend(left + right)
        band.clear()

    cuts = sorted((b for b in body if spans(b)), key=lambda b: b.y0)
    rest = sorted((b for b in body if not spans(b)), key=lambda b: b.y0)
    i = 0
    for cut in cuts:
        while i < len(rest) and (rest[i].y0 + rest[i].y1) / 2 < (cut.y0 + cut.y1) / 2:
            band.append(rest[i])
            i += 1
        flush()
        ordered.append(cut)
    band.extend(rest[i:])
    flush()
    return headers + ordered + footers
