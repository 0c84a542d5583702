"""What the offline composer decides for one part of a question (`PartAnswer`), and how it reads a
candidate to decide it (`evidence_of`): shared by the choosing (offline.py) and the writing
(offline_writing.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from interleaf.generate.asking import Part
from interleaf.generate.offline_scoring import Scored
from interleaf.generate.offline_units import Unit, caption_of, where
from interleaf.generate.relevance import Evidence
from interleaf.generate.sentences import TableRow
from interleaf.generate.table_cells import Difference


@dataclass(frozen=True)
class PartAnswer:
    part: Part
    chosen: Scored | None
    ranked: tuple[Scored, ...]
    reason: str = ""  # why nothing answers it
    compared: tuple[TableRow, ...] = ()  # rows written beside the chosen one: the other side of a comparison
    labels_only: bool = False  # answered by a figure's labels: written as the figure, the labels quoted
    extreme: str = ""  # "the highest of the table's rows": the chosen row is the extreme a superlative asks for
    # "how much higher ... than ...": the difference worked out from the chosen row's table, written
    # in the answer and given as its short answer
    difference: Difference | None = None


def evidence_of(unit: Unit, units: Sequence[Unit]) -> Evidence:
    """A candidate read with what names its subject: a row with its group and its table's caption
    (also a caption the parser cut off as a text quote of the same page); a caption or description
    with the caption; a sentence with its paragraph (where "it" is named). A number the
    question names must be in the candidate itself, or a table's caption ("in 1.2 M HNO3")."""
    q = unit.quote
    context: list[str] = []
    own = unit.text
    if q.modality == "image":
        captions = [
            u.text
            for u in units
            if u.kind == "sentence"
            and u.quote.kind == "caption"
            and u.quote.page_idx == q.page_idx
            and u.quote.doc_id == q.doc_id
        ]
        caption = caption_of(q)
        context += [caption, where(q), *captions]
        own = f"{unit.text}\n{caption}"
        if unit.row is not None:
            context.append(unit.row.group)
    if unit.paragraph:  # its paragraph: where the subject of "They cost between $1200 and $1850" is named
        context.append(unit.paragraph)
    return Evidence(unit.text, "\n".join(c for c in context if c), q.doc_id, q.doc_name, q.doc_title or "", own)
