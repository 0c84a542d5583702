"""A document's title: what names it in the header of every passage the index holds, at the root of
its section tree, where a question names a document, and beside an answer's sources.

Three places may say it, taken in this order: the file's metadata title, when it is one
(`interleaf.pdf.document.metadata_title`); the outline's one top-level entry, when the outline has a
single root (the author's name for everything under it); the title the parser found on the first
page. None of them is taken when it only names a part of a document, and then the file's name stands
for it: the 619-page game manual of scale/ has no metadata title, three roots in its outline, and
opens on "Table of Contents", which had been its title and so the first words of each of its 5,800
indexed passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.structure.outline import OutlineEntry

# What books, papers and reports call their parts: each names a part in any document, never the
# document itself. Compared whole, after the numbering and the punctuation are dropped.
PART_NAMES = frozenset(
    {
        "abstract",
        "acknowledgements",
        "acknowledgments",
        "appendices",
        "appendix",
        "bibliography",
        "contents",
        "executive summary",
        "foreword",
        "glossary",
        "index",
        "introduction",
        "list of figures",
        "list of tables",
        "preface",
        "references",
        "summary",
        "table of contents",
    }
)
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[IVXLC]+)\b[.)]?")


def is_part_name(text: str) -> bool:
    """Whether `text` is only a part's name: "Table of Contents", "CONTENTS", "1 Introduction"."""
    words = re.sub(r"[^\w\s]", " ", _NUMBERING.sub("", text.strip())).split()
    return " ".join(words).casefold() in PART_NAMES


def outline_root(outline: Sequence[OutlineEntry]) -> str | None:
    """The title of the outline's top-level entry when it has exactly one."""
    if not outline:
        return None
    top = min(e.level for e in outline)
    roots = [e for e in outline if e.level == top]
    return roots[0].title if len(roots) == 1 else None


def document_title(metadata: str | None, outline: Sequence[OutlineEntry], page_title: str | None) -> str | None:
    """The first of the metadata title, the outline's single root and the first page's title that is
    not a part's name; None when none is (the file's name stands for it)."""
    for title in (metadata, outline_root(outline), page_title):
        if title and title.strip() and not is_part_name(title):
            return " ".join(title.split())
    return None
