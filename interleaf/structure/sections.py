"""A document's section tree, and the section every quote sits in.

Sources, best first: the PDF outline (bookmarks) where there is one; numbered headings at the start
of quotes ("7.4.12.6", "Exhibit 7.4.12-12", "Chapter 12") and title quotes otherwise; running
headers ("Exhibit 7.4.12-14 (Cont'd 2)") for units whose first page carries no heading the parser kept.
An outline entry is anchored to the quote that carries its heading (same number, or same words), else
to its destination's height on the page, else to the top of its page. A quote belongs to the last
section that starts at or before it in reading order.

Pure: rows in, rows out (`build_sections`); the caller stores them as the `sections` table and the
`section_id` / `section_path` columns of `quotes`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from interleaf.evidence import fold
from interleaf.structure.headings import SECTION_KINDS, Heading, parse_heading
from interleaf.structure.outline import OutlineEntry

PATH_SEPARATOR = " > "
FURNITURE_KINDS = frozenset({"header", "footer"})
# a title quote with a plain leading number: "1 Introduction", "2. Related work" (no outline case only)
_SIMPLE_NUMBERED = re.compile(r"^(?P<num>\d{1,2})\.?\s+(?P<title>[A-Z].{2,80})$")
# A heading quote found by its words must share this many leading characters with the entry's title
# (short titles such as "Wick" or "Finch" must match whole): measured on game-manual-619p.pdf, where
# 1,372 outline entries anchor to their title quotes.
MIN_TITLE_PREFIX = 12


@dataclass
class _Start:
    page_idx: int
    layout_idx: int  # -1: the top of the page
    level: int
    title: str
    heading: Heading | None
    source: str  # outline | heading | running_header
    seq: int = 0
    quote_id: str | None = None
    section_id: str = ""
    parent_id: str | None = None
    path: str = ""
    quotes: list[str] = field(default_factory=list)
    last_page: int = -1

    @property
    def position(self) -> tuple[int, int, int]:
        return (self.page_idx, self.layout_idx, self.seq)


def section_id(doc_id: str, ordinal: int) -> str:
    return f"{doc_id[:16]}-s{ordinal:04d}"


def _display(start: _Start) -> str:
    """The heading as a reader sees it: "Exhibit 7.4.12-14 Quarterly Account Summary"."""
    h = start.heading
    if h is None:
        return start.title
    title = h.title or start.title
    return f"{h.label} {title}".strip() if h.label.casefold() not in title.casefold() else title


def _ordered(quotes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies in reading order: the folded-text cache below must not touch the caller's rows."""
    return [dict(q) for q in sorted(quotes, key=lambda r: (r["page_idx"], r["layout_idx"]))]


def _is_body(q: dict[str, Any]) -> bool:
    return not q.get("furniture") and q["kind"] not in FURNITURE_KINDS


def _heading_of(q: dict[str, Any]) -> Heading | None:
    h = parse_heading(q.get("text") or "")
    if h is None and q.get("caption"):
        h = parse_heading(q["caption"])  # a table whose caption is "Exhibit 7.4.12-115 (01-18-2005) ..."
    return h if h is not None and (h.kind in SECTION_KINDS or h.kind == "") else None


def _folded(q: dict[str, Any]) -> str:
    if "_folded" not in q:
        q["_folded"] = fold(q.get("text") or "")
    return q["_folded"]


def _first_line(q: dict[str, Any]) -> str:
    text = (q.get("text") or "").strip()
    return fold(text.splitlines()[0]) if text else ""


def _anchor(
    entry: OutlineEntry, heading: Heading | None, page: list[dict[str, Any]], after: tuple[int, int]
) -> tuple[int, dict[str, Any] | None]:
    """The layout position where an outline entry starts on its page, and the quote carrying its heading."""
    candidates = [q for q in page if (q["page_idx"], q["layout_idx"]) >= after and _is_body(q)]
    if heading is not None:
        line = re.compile(rf"(?:^|\n)\s*(?:[A-Za-z]+\s+)?{re.escape(heading.number)}(?![\w.\-])")
        for q in candidates:
            own = _heading_of(q)
            if own is not None and own.key == heading.key:
                return q["layout_idx"], q
        for q in candidates:  # a heading the parser merged into the middle of a block
            if line.search(q.get("text") or ""):
                return q["layout_idx"], None
    wanted = fold(heading.title if heading and heading.title else entry.title)
    for q in candidates:  # the heading quote itself: its first line or whole text is the title
        if wanted and wanted in (_first_line(q), _folded(q)):
            return q["layout_idx"], None
    if entry.y is not None:
        for q in candidates:
            if q["bbox"][3] > entry.y + 1.0:  # the first quote whose bottom lies below the destination's top
                return q["layout_idx"], None
    if len(wanted) > MIN_TITLE_PREFIX:  # a heading the parser joined to its first paragraph
        for q in candidates:
            if _folded(q).startswith(wanted[:MIN_TITLE_PREFIX]):
                return q["layout_idx"], None
    floor = after[1] if after[0] == entry.page_idx else -1
    return floor, None


def _outline_starts(toc: Sequence[OutlineEntry], by_page: dict[int, list[dict[str, Any]]]) -> list[_Start]:
    starts: list[_Start] = []
    level_of_number: dict[str, int] = {}
    after = (-1, -1)
    for entry in toc:
        if entry.page_idx < 0:
            continue  # a bookmark to nowhere in this file
        heading = parse_heading(entry.title)
        if heading is not None and heading.kind not in SECTION_KINDS and heading.kind != "":
            heading = None  # "Table 3 ..." in an outline is a bookmark to a table, kept as a plain title
        layout_idx, quote = _anchor(entry, heading, by_page.get(entry.page_idx, []), after)
        if quote is not None and heading is not None:
            own = _heading_of(quote)
            if own is not None and own.kind and not heading.kind:  # the page says "Exhibit", the outline not
                heading = Heading(own.kind, heading.number, heading.title, False)
        level = entry.level
        if heading is not None:
            # a flat outline of numbered entries ("7.4.12.1", "7.4.12.1.1") nests by the numbers
            parent = heading.parent_key
            if parent is not None and parent in level_of_number:
                level = max(level, level_of_number[parent] + 1)
            level_of_number[heading.key] = level
        title = heading.title if heading is not None and heading.title else entry.title
        starts.append(_Start(entry.page_idx, layout_idx, level, title, heading, "outline"))
        after = (entry.page_idx, layout_idx)
    return starts


def _heading_starts(ordered: list[dict[str, Any]], page_height: dict[int, float], known: set[str]) -> list[_Start]:
    """Sections from the quotes themselves: numbered headings, running headers, title quotes."""
    starts: list[_Start] = []
    current_level = 0
    for q in ordered:
        h = _heading_of(q) if _is_body(q) or q["kind"] in FURNITURE_KINDS else None
        if h is not None:
            if h.key in known:
                continue
            top = q["bbox"][1] < 0.15 * page_height.get(q["page_idx"], 792.0)
            if h.continued or q["kind"] in FURNITURE_KINDS:
                if not (h.continued or top):
                    continue  # a footer names the page's last section, not where one starts
                if not h.continued and any(k.startswith(h.key + ".") or k.startswith(h.key + "-") for k in known):
                    continue  # "7.4 Account Services" over 7.4.12.x pages: an ancestor, not a new unit
                # a running header of a unit whose first page showed no heading: it starts here
                starts.append(_Start(q["page_idx"], -1, h.depth, h.title, h, "running_header"))
            else:
                starts.append(
                    _Start(q["page_idx"], q["layout_idx"], h.depth, h.title, h, "heading", quote_id=q["quote_id"])
                )
            known.add(h.key)
            current_level = h.depth
            continue
        if q["kind"] == "title" and _is_body(q):
            text = " ".join((q["text"] or "").split())
            m = _SIMPLE_NUMBERED.match(text)
            if m:
                starts.append(_Start(q["page_idx"], q["layout_idx"], 1, m.group("title"), None, "heading"))
                current_level = 1
            elif len(text.split()) <= 16:
                starts.append(_Start(q["page_idx"], q["layout_idx"], current_level + 1, text, None, "heading"))
    return starts


def _nested_headings(ordered: list[dict[str, Any]], outline: list[_Start]) -> list[_Start]:
    """With an outline: numbered headings it lacks, nested under the outline section their number extends."""
    by_key = {s.heading.key: s for s in outline if s.heading is not None}
    extra = []
    for q in ordered:
        if not _is_body(q):
            continue
        h = _heading_of(q)
        if h is None or h.continued or h.key in by_key or h.parent_key not in by_key:
            continue
        parent = by_key[h.parent_key]
        start = _Start(q["page_idx"], q["layout_idx"], parent.level + 1, h.title, h, "heading", quote_id=q["quote_id"])
        by_key[h.key] = start
        extra.append(start)
    return extra


def build_sections(
    doc_id: str,
    toc: Sequence[OutlineEntry],
    quotes: Sequence[dict[str, Any]],
    pages: Sequence[dict[str, Any]] | None = None,
    doc_title: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """-> (`sections` rows, {quote_id: section_id}).

    `quotes`: the document's `quotes` rows (quote_id, page_idx, layout_idx, kind, bbox, text, caption,
    furniture); `pages`: its `pages` rows (page_idx, height), for the running-header band. Row 0 is the
    document itself (level 0): quotes before the first heading belong to it."""
    ordered = _ordered(quotes)
    page_height = {int(p["page_idx"]): float(p["height"]) for p in pages or []}
    by_page: dict[int, list[dict[str, Any]]] = {}
    for q in ordered:
        by_page.setdefault(q["page_idx"], []).append(q)

    starts = _outline_starts(toc, by_page) if toc else []
    if starts:
        starts += _nested_headings(ordered, starts)
        source_order = {id(s): i for i, s in enumerate(starts)}
        starts.sort(key=lambda s: (s.page_idx, s.layout_idx, source_order[id(s)]))
    else:
        starts = _heading_starts(ordered, page_height, set())
    for i, s in enumerate(starts):
        s.seq = i

    root = _Start(0, -2, 0, doc_title or "", None, "document")
    root.section_id = section_id(doc_id, 0)
    stack: list[_Start] = [root]
    for ordinal, s in enumerate(starts, start=1):
        s.section_id = section_id(doc_id, ordinal)
        while len(stack) > 1 and stack[-1].level >= s.level:
            stack.pop()
        s.parent_id = stack[-1].section_id
        parent_path = stack[-1].path
        s.path = f"{parent_path}{PATH_SEPARATOR}{_display(s)}" if parent_path else _display(s)
        stack.append(s)

    section_of: dict[str, str] = {}
    current, nxt = root, 0
    for q in ordered:
        while nxt < len(starts) and (starts[nxt].page_idx, starts[nxt].layout_idx) <= (q["page_idx"], q["layout_idx"]):
            current, nxt = starts[nxt], nxt + 1
        section_of[q["quote_id"]] = current.section_id
        current.quotes.append(q["quote_id"])
        current.last_page = max(current.last_page, q["page_idx"])

    rows = []
    for ordinal, s in enumerate([root, *starts]):
        h = s.heading
        rows.append(
            {
                "section_id": s.section_id,
                "doc_id": doc_id,
                "ordinal": ordinal,
                "level": s.level,
                "parent_id": s.parent_id,
                "label": h.label if h is not None else None,
                "number": h.key if h is not None else None,
                "title": s.title,
                "path": s.path,
                "page_start": max(s.page_idx, 0),
                "page_end": max(s.last_page, s.page_idx, 0),
                "first_quote_id": s.quotes[0] if s.quotes else None,
                "n_quotes": len(s.quotes),
                "source": s.source,
            }
        )
    return rows, section_of


def section_paths(rows: Sequence[dict[str, Any]], section_of: dict[str, str]) -> dict[str, str]:
    """{quote_id: section_path}: the `section_path` column of `quotes`."""
    path = {r["section_id"]: r["path"] for r in rows}
    return {q: path[s] for q, s in section_of.items()}
