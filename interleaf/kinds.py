"""Quote kinds, defined once: which kinds are image quotes (a crop, described, placed as `imageN`)
and which are text quotes (cited as `[i]`). MMDocRAG §2.1 splits quotes this way."""

from __future__ import annotations

from typing import Literal

# Kinds a parser crops to a PNG: the image quotes Interleaf's parsers produce, and what the
# describe stage can read and describe.
CROPPED_KINDS = frozenset({"figure", "table", "equation"})
# Kinds whose evidence is an image (a quote's modality): the cropped kinds, and "chart" / "image"
# as other sources of quotes (MMDocRAG's own, MinerU's types) name them. Every other kind is text.
IMAGE_KINDS = CROPPED_KINDS | {"chart", "image"}
# Kinds whose sentences can refer to a figure or table ("as Table 2 shows").
PROSE_KINDS = frozenset({"text", "list", "title"})
# Kinds whose box holds whole lines of the text layer: a line the box cuts short joins it (layout
# parser), where a figure's or table's words stay where they are.
LINE_KINDS = frozenset({"text", "title", "caption", "reference"})
HEADING_KINDS = frozenset({"title"})
FURNITURE_KINDS = frozenset({"header", "footer"})
# Kinds whose line ends carry meaning: a table's rows end in cells, a formula's or code's line may end
# in a minus sign. Their text is stored as printed: no word is joined across their lines
# (interleaf/text/hyphens.py); every other kind's text, and every caption, runs as prose does.
AS_PRINTED_KINDS = frozenset({"table", "equation", "code"})

Modality = Literal["text", "image"]


def modality_of(kind: str) -> Modality:
    return "image" if kind in IMAGE_KINDS else "text"
