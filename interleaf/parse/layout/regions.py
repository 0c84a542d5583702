"""From raw layout regions and page words to page blocks: dedupe, merge, fill, caption.

Everything here is geometry on one page, in PDF points, with no model and no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from interleaf.kinds import CROPPED_KINDS, LINE_KINDS
from interleaf.parse.layout.model import Region
from interleaf.pdf.rows import group_rows, rows_text
from interleaf.pdf.words import Word
from interleaf.text.references import caption_label

# CDLA label -> quote kind
KIND_OF_LABEL = {
    "text": "text",
    "title": "title",
    "figure": "figure",
    "figure_caption": "caption",
    "table": "table",
    "table_caption": "caption",
    "header": "header",
    "footer": "footer",
    "reference": "reference",
    "equation": "equation",
}
# Floats: what a caption belongs to, and what owns the text boxes inside it.
FLOAT_KINDS = ("figure", "table")


@dataclass
class Block:
    kind: str
    x0: float
    y0: float
    x1: float
    y1: float
    score: float | None
    words: list[Word] = field(default_factory=list)
    caption_of: str | None = None  # for captions: "figure" or "table" when the label says so
    caption: str | None = None
    caption_box: tuple[float, float, float, float] | None = None  # where the attached caption sat
    text: str = ""

    def extend(self, other: Block | Word) -> None:
        self.x0, self.y0 = min(self.x0, other.x0), min(self.y0, other.y0)
        self.x1, self.y1 = max(self.x1, other.x1), max(self.y1, other.y1)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)


def _intersection(a: Block, b: Block) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def blocks_from_regions(regions: list[Region]) -> list[Block]:
    blocks = []
    for r in regions:
        kind = KIND_OF_LABEL.get(r.label, "text")
        caption_of = {"figure_caption": "figure", "table_caption": "table"}.get(r.label)
        blocks.append(Block(kind, r.x0, r.y0, r.x1, r.y1, r.score, caption_of=caption_of))
    return blocks


def dedupe(blocks: list[Block]) -> list[Block]:
    """Drop a box that repeats a better one (the model often gives one box two labels), and text
    boxes lying inside a figure or table (chart labels and header rows belong to it, even when
    the model calls them captions: a real caption sits outside the box)."""
    kept: list[Block] = []
    for block in sorted(blocks, key=lambda b: -(b.score or 0)):
        duplicate = False
        for other in kept:
            inter = _intersection(block, other)
            if not inter:
                continue
            union = block.area + other.area - inter
            if inter / union > 0.6:
                duplicate = True
            elif block.kind not in CROPPED_KINDS and other.kind in FLOAT_KINDS:
                duplicate = inter / max(block.area, 1e-6) > 0.85
            if duplicate:
                break
        if not duplicate:
            kept.append(block)
    # A figure or table found after text boxes inside it absorbs them as well.
    containers = [b for b in kept if b.kind in FLOAT_KINDS]
    return [
        b
        for b in kept
        if b.kind in CROPPED_KINDS or not any(_intersection(b, c) / max(b.area, 1e-6) > 0.85 for c in containers)
    ]


def merge_split_figures(blocks: list[Block], gap: float = 12.0) -> list[Block]:
    """Join figure boxes the model split in two: touching or nearly, and aligned."""
    changed = True
    while changed:
        changed = False
        figures = [b for b in blocks if b.kind == "figure"]
        for i, a in enumerate(figures):
            for b in figures[i + 1 :]:
                v_overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
                h_overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
                h_gap = max(a.x0, b.x0) - min(a.x1, b.x1)
                v_gap = max(a.y0, b.y0) - min(a.y1, b.y1)
                side_by_side = v_overlap > 0.5 * min(a.height, b.height) and h_gap < gap
                stacked = h_overlap > 0.5 * min(a.width, b.width) and v_gap < gap
                if side_by_side or stacked:
                    a.x0, a.y0 = min(a.x0, b.x0), min(a.y0, b.y0)
                    a.x1, a.y1 = max(a.x1, b.x1), max(a.y1, b.y1)
                    a.score = max(a.score or 0, b.score or 0)
                    blocks = [x for x in blocks if x is not b]
                    changed = True
                    break
            if changed:
                break
    return blocks


def assign_words(blocks: list[Block], words: list[Word]) -> list[Word]:
    """Give each word to the smallest block holding its centre; return the words left over."""
    order = sorted(range(len(blocks)), key=lambda i: blocks[i].area)
    orphans = []
    for word in words:
        cx, cy = word.cx, word.cy
        for i in order:
            b = blocks[i]
            if b.x0 - 2 <= cx <= b.x1 + 2 and b.y0 - 2 <= cy <= b.y1 + 2:
                b.words.append(word)
                break
        else:
            orphans.append(word)
    return orphans


def complete_lines(blocks: list[Block], orphans: list[Word]) -> list[Word]:
    """A line of the text layer belongs to one region: words of a line that a text box cut short
    (a caption box starting mid-line loses "Figure 3:") join the block holding the rest of the
    line, which grows to hold them. Returns the words still without a block."""
    owner: dict[tuple[int, int], Block] = {}
    for b in blocks:
        if b.kind in LINE_KINDS:
            for w in b.words:
                owner.setdefault((w.block, w.line), b)
    left = []
    for w in orphans:
        b = owner.get((w.block, w.line))
        if b is None:
            left.append(w)
            continue
        b.words.append(w)
        b.extend(w)
    return left


def blocks_from_orphans(orphans: list[Word]) -> list[Block]:
    """Text the layout model missed still becomes quotes: one per text-layer block."""
    groups: dict[int, list[Word]] = {}
    for w in orphans:
        groups.setdefault(w.block, []).append(w)
    blocks = []
    for ws in groups.values():
        blocks.append(
            Block(
                "text",
                min(w.x0 for w in ws),
                min(w.y0 for w in ws),
                max(w.x1 for w in ws),
                max(w.y1 for w in ws),
                None,
                words=ws,
            )
        )
    return blocks


def _line(words: list[Word]) -> Word:
    """A text-layer line as one item: its words in order, its box around them."""
    words = sorted(words, key=lambda w: (w.order, w.x0))
    first = words[0]
    return Word(
        min(w.x0 for w in words),
        min(w.y0 for w in words),
        max(w.x1 for w in words),
        max(w.y1 for w in words),
        " ".join(w.text for w in words),
        first.block,
        first.line,
        0,
    )


def _lines(words: list[Word]) -> dict[int, dict[int, list[Word]]]:
    blocks: dict[int, dict[int, list[Word]]] = {}
    for w in words:
        blocks.setdefault(w.block, {}).setdefault(w.line, []).append(w)
    return blocks


def table_words_to_text(words: list[Word]) -> str:
    """Lines grouped into rows across the whole box, so a table reads row by row."""
    return rows_text([_line(ws) for lines in _lines(words).values() for ws in lines.values()])


def words_to_text(words: list[Word]) -> str:
    """Text blocks as the PDF groups them (a table cell, a chart label, a paragraph), each block's
    lines in rows; blocks in rows by their first row. Keeping a block's lines together keeps a
    two-line label or cell readable as one phrase."""
    items = []
    for block, lines in _lines(words).items():
        rows = group_rows([_line(ws) for ws in lines.values()])
        first = rows[0]
        text = "\n".join(" ".join(t.text for t in row) for row in rows)
        x0 = min(t.x0 for row in rows for t in row)
        items.append(Word(x0, min(t.y0 for t in first), x0, max(t.y1 for t in first), text, block, 0, 0))
    return rows_text(items)


def _caption_target(text: str) -> str | None:
    """The kind of float a caption names: "table" for a table label, "figure" for any other."""
    label = caption_label(text)
    if label is None:
        return None
    return "table" if label.family == "table" else "figure"


def attach_captions(blocks: list[Block], max_gap: float) -> list[Block]:
    """Pair each caption with the nearest figure or table it sits above or below (or beside),
    by label and "Figure N" / "Table N" prefix. Attached captions leave the block list; a caption
    with no partner stays a quote of kind `caption`."""
    targets = [b for b in blocks if b.kind in FLOAT_KINDS]
    candidates = []
    for b in blocks:
        if b.kind == "caption":
            candidates.append((b, b.caption_of or _caption_target(b.text)))
        elif b.kind == "text" and (prefix := _caption_target(b.text)):
            candidates.append((b, prefix))
    pairs = []
    for cap, wanted in candidates:
        for t in targets:
            if wanted and t.kind != wanted and not (wanted == "figure" and t.kind == "table"):
                continue
            h_overlap = min(cap.x1, t.x1) - max(cap.x0, t.x0)
            v_gap = max(cap.y0 - t.y1, t.y0 - cap.y1)
            v_overlap = min(cap.y1, t.y1) - max(cap.y0, t.y0)
            h_gap = max(cap.x0 - t.x1, t.x0 - cap.x1)
            if h_overlap > 0.3 * min(cap.width, t.width) and v_gap < max_gap:
                distance = max(v_gap, 0.0)
            elif v_overlap > 0.3 * min(cap.height, t.height) and h_gap < max_gap:
                distance = max(h_gap, 0.0) + 5.0  # beside is less usual than above / below
            else:
                continue
            if _intersection(cap, t) > 0.5 * cap.area:
                continue  # a header row or legend inside the box, not its caption
            penalty = 0.0 if (wanted or "figure") == t.kind else 10.0
            if caption_label(cap.text) is None:
                penalty += 30.0  # "Table 2: ..." further away beats an unnumbered label nearby
            pairs.append((distance + penalty, id(cap), cap, t))
    used_caps: set[int] = set()
    used_targets: set[int] = set()
    for _, _, cap, t in sorted(pairs, key=lambda p: p[:2]):
        if id(cap) in used_caps or id(t) in used_targets:
            continue
        t.caption = cap.text
        t.caption_box = cap.bbox
        used_caps.add(id(cap))
        used_targets.add(id(t))
    return [b for b in blocks if id(b) not in used_caps]


def absorb_float_labels(
    blocks: list[Block], slack: float = 4.0, touch: float = 4.0, label_height: float = 14.0
) -> list[Block]:
    """Text the layout model left outside a figure or table that belongs to it:
    - unnumbered text between the float and its own numbered caption (a legend, a units line):
      the caption closes the float, so nothing in between can be body text;
    - one-line labels touching a figure's edge (panel titles over a row of charts): typesetting
      leaves a gap of a line or more between a figure and the body text, never `touch` points; a
      line taller than `label_height` is a heading, not a label. Not for tables, which in manuals
      fill the page from header to footer, and not for blocks labelled header (page furniture).
    The float's box grows to hold them and its text is read again."""
    absorbed: set[int] = set()
    for t in blocks:
        if t.kind not in FLOAT_KINDS:
            continue
        inside = [b for b in blocks if id(b) not in absorbed and _belongs_to(b, t, slack, touch, label_height)]
        for b in inside:
            t.words.extend(b.words)
            t.extend(b)
            absorbed.add(id(b))
        if inside:
            t.text = table_words_to_text(t.words) if t.kind == "table" else words_to_text(t.words)
    return [b for b in blocks if id(b) not in absorbed]


def _belongs_to(b: Block, t: Block, slack: float, touch: float, label_height: float) -> bool:
    if b is t or b.kind not in ("text", "caption") or caption_label(b.text) or not b.words:
        return False
    if t.caption_box is not None and caption_label(t.caption):
        cx0, cy0, cx1, cy1 = t.caption_box
        low, high = (t.y1, cy0) if cy0 >= t.y1 - slack else (cy1, t.y0)
        within_x = b.x0 >= min(t.x0, cx0) - slack and b.x1 <= max(t.x1, cx1) + slack
        if within_x and b.y0 >= low - slack and b.y1 <= high + slack:
            return True
    if t.kind != "figure":
        return False
    one_line = len({(w.block, w.line) for w in b.words}) == 1 and b.height <= label_height
    gap = max(t.y0 - b.y1, b.y0 - t.y1)
    return one_line and -slack <= gap <= touch and b.x0 >= t.x0 - slack and b.x1 <= t.x1 + slack
