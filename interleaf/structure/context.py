"""Contextual headers: what a quote's indexed text carries besides its own words.

A table row three pages into "Schedule 4.2-7" never says "Schedule 4.2-7"; the question does.
The header gives every quote the document title and its section path, and a table or figure its
caption and, for a part of a table continued from an earlier page, the first part's title and header
row, so the retrievers see the names a reader navigates by (contextual retrieval: the chunk is
prefixed with the context that locates it in its document).
"""

from __future__ import annotations

from interleaf.structure.sections import PATH_SEPARATOR
from interleaf.structure.tables import TablePart

# The deepest levels of a section path kept in a header: the leaf names the unit, its parents the
# part of the document; the root levels ("Field Guide > PART ONE") repeat over thousands of quotes.
PATH_LEVELS = 3
MAX_HEADER_CHARS = 300


def short_path(path: str | None, levels: int = PATH_LEVELS) -> str:
    """The last `levels` headings of a section path."""
    if not path:
        return ""
    parts = [p for p in path.split(PATH_SEPARATOR) if p.strip()]
    return PATH_SEPARATOR.join(parts[-levels:])


def contextual_header(
    doc_title: str | None,
    section_path: str | None,
    own_text: str = "",
    levels: int = PATH_LEVELS,
    *,
    opens_section: bool = True,
    max_chars: int = MAX_HEADER_CHARS,
) -> str:
    """ "doc title | section path". The quote that opens its section and reads as its heading is
    not prefixed with itself; a paragraph that merely starts with the heading's words ("Soil
    nitrogen levels drop ..." under "Soil nitrogen") keeps the path."""
    head = [doc_title or ""]
    path = short_path(section_path, levels)
    own = " ".join(own_text.split()).casefold()
    leaf = path.split(PATH_SEPARATOR)[-1].casefold() if path else ""
    is_heading = opens_section and bool(own) and bool(leaf) and (own.startswith(leaf) or leaf.startswith(own))
    if path and not is_heading:
        head.append(path)
    return " | ".join(h for h in head if h)[:max_chars]


def item_context(caption: str | None, part: TablePart | None) -> list[str]:
    """The lines a table or figure quote carries before its body: its caption, else the title of the
    table it continues; and a continued part's header row, when its own text does not repeat it."""
    lines = []
    if caption and caption.strip():
        lines.append(caption.strip())
    elif part is not None and part.part > 1 and part.title:
        lines.append(f"{part.title} (continued)")
    if part is not None and part.part > 1 and part.header_row and not part.repeats_header:
        lines.append(part.header_row)
    return lines
