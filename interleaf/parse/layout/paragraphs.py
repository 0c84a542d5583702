"""Paragraph boxes the layout model drew wrong, set right from the page's words.

- **A heading inside a paragraph's box.** The model sometimes draws one box over the end of one
  section, the next section's heading and its first paragraph. The heading's words go to its own,
  smaller box (regions.assign_words), and the paragraph box is left holding two sections' text as
  one quote: the second section's opening sentence is found under the first's quote and section.
  The box is cut at the heading: the words above it and those below it become two blocks.
- **One paragraph in two boxes.** A paragraph the model boxed in two, one directly under the other,
  is cut mid-sentence ("... the kettle is filled to" | "the second mark before ...").
  Neither quote holds the sentence. The two are one block when the first ends inside a sentence (on
  a letter or a comma) and the second goes on in lower case, in the same column with no more than a
  line's gap between them.

Only body text is touched (`PROSE_KINDS`): a title, a caption or a float keeps its box. A script
without case never reads as going on, so its paragraphs are never joined.

Worth, on the MMLongBench-Doc dev half: with the passive-voice answer (generate/how_done.py), one
answerable question more right, whose answer only the cut quote holds. Alone, one answer that held
the gold number by accident is lost, and a question asking what a cost consists of is answered with
the sentence that lists its parts (which the benchmark still counts wrong: its gold spells one part
otherwise than the page cited). qa_dev's document-scope recall@5 loses one piece of evidence to the
quotes that grew on other pages.
"""

from __future__ import annotations

import statistics

from interleaf.parse.layout.regions import Block, words_to_text
from interleaf.pdf.words import Word

PROSE_KINDS = frozenset({"text", "reference"})
_SLACK = 2.0  # points: a heading's box drawn a hair wider than the paragraph's is still inside it


def split_at_headings(blocks: list[Block]) -> list[Block]:
    """Each prose block that encloses a heading's box, cut at the heading into the block of the words
    above it and the block of those below it (either side with no word leaves no block)."""
    headings = [b for b in blocks if b.kind == "title" and b.words]
    out: list[Block] = []
    for b in blocks:
        pieces = [b]
        for h in headings:
            pieces = [part for p in pieces for part in _cut(p, h)]
        out += pieces
    return out


def _cut(b: Block, heading: Block) -> list[Block]:
    inside = (
        b.kind in PROSE_KINDS
        and heading.x0 >= b.x0 - _SLACK
        and heading.x1 <= b.x1 + _SLACK
        and heading.y0 > b.y0 + _SLACK
        and heading.y1 < b.y1 - _SLACK
    )
    if not inside:
        return [b]
    above = [w for w in b.words if w.cy < heading.y0]
    below = [w for w in b.words if w.cy > heading.y1]
    beside = [w for w in b.words if heading.y0 <= w.cy <= heading.y1]
    if not above or not below or beside:  # nothing to cut, or words beside the heading: not a heading line
        return [b]
    return [_block_of(b, above), _block_of(b, below)]


def _block_of(b: Block, words: list[Word]) -> Block:
    part = Block(b.kind, b.x0, min(w.y0 for w in words), b.x1, max(w.y1 for w in words), b.score)
    part.words = list(words)
    return part


def join_cut_paragraphs(ordered: list[Block]) -> list[Block]:
    """`ordered` (in reading order, their text read) with each prose block that a sentence runs on
    from into the next one joined to it; the joined block's text is read again."""
    out: list[Block] = []
    for b in ordered:
        last = out[-1] if out else None
        if last is not None and _runs_on(last, b):
            last.words.extend(b.words)
            last.extend(b)
            last.score = max(last.score or 0.0, b.score or 0.0)
            last.text = words_to_text(last.words)
            continue
        out.append(b)
    return out


def _runs_on(a: Block, b: Block) -> bool:
    if a.kind not in PROSE_KINDS or b.kind not in PROSE_KINDS or not a.words or not b.words:
        return False
    end, start = a.text.rstrip()[-1:], b.text.lstrip()[:1]
    if not ((end.isalpha() or end == ",") and start.islower()):  # the sentence is not over, and goes on
        return False
    overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
    line = statistics.median(w.y1 - w.y0 for w in a.words)
    gap = b.y0 - a.y1
    return overlap > 0.5 * min(a.width, b.width) and -line <= gap <= line
