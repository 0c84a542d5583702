"""Rows of positioned text: the one way words, OCR lines and text blocks are put in reading rows.

A row is a run of items whose vertical centres lie within half the median item height of the
row's mean centre. Measured against the alternative of joining items whose extents overlap (on the
image and text quotes of the dev corpus): a rotated axis title, as tall as the chart, no longer
pulls every tick label beside it into one row, and a superscript or a word in a larger font still
stays in its line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar


class Positioned(Protocol):
    @property
    def x0(self) -> float: ...

    @property
    def y0(self) -> float: ...

    @property
    def y1(self) -> float: ...

    @property
    def text(self) -> str: ...


P = TypeVar("P", bound=Positioned)


def _cy(item: Positioned) -> float:
    return (item.y0 + item.y1) / 2


def group_rows(items: Sequence[P]) -> list[list[P]]:
    """Rows top to bottom, items left to right within a row."""
    if not items:
        return []
    heights = sorted(max(t.y1 - t.y0, 0.1) for t in items)
    tolerance = heights[len(heights) // 2] * 0.5
    rows: list[list[P]] = []
    centre = 0.0  # mean centre of the last row
    for item in sorted(items, key=lambda t: (_cy(t), t.x0)):
        if rows and abs(_cy(item) - centre) <= tolerance:
            rows[-1].append(item)
            centre += (_cy(item) - centre) / len(rows[-1])
        else:
            rows.append([item])
            centre = _cy(item)
    return [sorted(row, key=lambda t: t.x0) for row in rows]


def rows_text(items: Sequence[Positioned]) -> str:
    """The items' text in reading order: a line per row, items of a row joined by a space."""
    return "\n".join(" ".join(t.text for t in row) for row in group_rows(items))
