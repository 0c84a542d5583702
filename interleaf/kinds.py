"""Quote kinds, defined once: which kinds are image quotes (a crop, described, placed as `imageN`)
and which are text quotes (cited as `[i]`). MMDocRAG §2.1 splits quotes this way."""

from __future__ import annotations

from typing import Literal

# Kinds a parser gives a crop to; every other kind is a text quote.
IMAGE_KINDS = frozenset({"figure", "table", "equation", "chart", "image"})
# Kinds whose sentences can refer to a figure or table ("as Table 2 shows").
PROSE_KINDS = frozenset({"text", "list", "title"})
HEADING_KINDS = frozenset({"title"})
FURNITURE_KINDS = frozenset({"header", "footer"})

Modality = Literal["text", "image"]


def modality_of(kind: str) -> Modality:
    return "image" if kind in IMAGE_KINDS else "text"
