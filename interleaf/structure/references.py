"""A question's references to the document's structure, resolved to sections and captioned items.

Read from the question's own words:
- labels: "Exhibit 7.4.12-12", "Section 7.4.12.6", "section 4.2", "Chapter 12" (`headings.find_references`)
  name the section with that number; a number that only prefixes section numbers ("Section 7.4.12" over
  7.4.12.1, 7.4.12-14, ...) names all of them, i.e. the part of the document they make up;
- titles: a phrase the question quotes ('The Glass Orchard') or a multi-word section title it contains
  names the section with that title; a quoted phrase that starts several titles ('The Tale of
  Varrowmere' over "The Tale of Varrowmere: Chapter 1", "...: Chapter 2") names the series; one that is
  a part of a title ('Dunmore's Gambit' in "Château du Lac, Dunmore's Gambit") names that section;
- items: "Table 2-2", "Figure 3" (`interleaf.text.references`) name the quotes captioned so.
A section named takes in every section below it.

Pure: question text and `sections` rows in, section ids out (`SectionResolver` precomputes the maps
once per loaded corpus; `resolve_references` is the one-call form).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from interleaf.evidence import fold
from interleaf.structure.headings import find_references
from interleaf.text.references import REFERENCE, Label, caption_label
from interleaf.text.tokens import tokenize

# a quoted phrase: "…", “…”, ‘…’, or '…' whose inner apostrophes are followed by a letter (Orwen's)
_QUOTED = re.compile(
    r"(?<!\w)(?:\"(?P<d>[^\"]{3,120})\"|“(?P<c>[^”]{3,120})”|‘(?P<s>(?:[^’]|’(?=\w)){3,120}?)’(?!\w)"
    r"|'(?P<a>(?:[^'\"]|'(?=\w)){3,120}?)'(?!\w))"
)
# a title's alternative names: "Château du Lac, Dunmore's Gambit", "Tamsin - Beyond the Salt Marsh"
_TITLE_PARTS = re.compile(r"\s*(?:[,:;(\u2013\u2014]|\s-\s)\s*")
# A title found unquoted in a question, or a quoted part of a title, must have this many content
# words (stop words aside): one- and two-word headings ("Overview", "Crop rotation", "Soil
# nitrogen") are the everyday names of topics, used in questions as words, not as pointers; quoted
# whole, any title counts. Measured: 2 -> 3 leaves qa_dev_long recall unchanged (0.829 / 0.976 at @5 /
# @20) and removes the scopes two qa_dev questions about cancer-guide.pdf got from its headings; with
# them, the offline answers' number recall was 0.79 instead of 0.81 (the same retrieval recall).
MIN_UNQUOTED_TITLE_WORDS = 3
# What may follow a series' shared title: "X: Chapter 2", "X - Page 1 of 3", "X (continued)", "X, Part 2"
_SERIES_TAIL = re.compile(r"^\s*(?:[:\-\u2013\u2014,(]|part\b|chapter\b|page\b|vol)", re.IGNORECASE)

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Resolved:
    text: str  # the words of the question that refer
    how: str  # label | label-prefix | title | title-series | title-part
    section_ids: tuple[str, ...]  # the sections named and every section below them, in document order


def quoted_phrases(question: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(question)]


def _kind_of(label: str | None) -> str:
    return label.split(" ", 1)[0].casefold() if label and " " in label else ""


def _kinds_agree(asked: str, has: str) -> bool:
    """ "Exhibit 7.4.12-14" finds an outline entry "7.4.12-14" (no kind word); "Chapter 2" never finds
    "Appendix 2"; "Section 7.4.12.6" / "section 7.4.12.6" find the bare "7.4.12.6"."""
    return not asked or not has or asked == has or {asked, has} <= {"section", ""}


def _word_in(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def _parts_of(title: str) -> list[str]:
    return [p.strip() for p in _TITLE_PARTS.split(title) if p.strip()]


def descendants(sections: Sequence[Row]) -> dict[str, set[str]]:
    """{section_id: itself and every section below it} from the rows' parent_id."""
    children: dict[str, list[str]] = {}
    for s in sections:
        if s.get("parent_id"):
            children.setdefault(s["parent_id"], []).append(s["section_id"])
    out: dict[str, set[str]] = {}
    for s in sections:
        found, stack = {s["section_id"]}, list(children.get(s["section_id"], []))
        while stack:
            child = stack.pop()
            if child not in found:
                found.add(child)
                stack.extend(children.get(child, []))
        out[s["section_id"]] = found
    return out


def most_specific(resolved: Sequence[Resolved]) -> list[Resolved]:
    """Drop a reference whose sections include all of another's: "Section 7.4.12" beside "Exhibit
    7.4.12-14", or a chapter beside the entry of it the question quotes."""
    sets = [set(r.section_ids) for r in resolved]
    return [
        r
        for i, r in enumerate(resolved)
        if not any(j != i and sets[j] < sets[i] for j in range(len(resolved)))
        and not any(sets[j] == sets[i] for j in range(i))
    ]


class SectionResolver:
    """The maps a question is resolved against, built once over every document's `sections` rows
    (section_id, doc_id, parent_id, level, label, number, title, path, page_start, page_end)."""

    def __init__(self, sections: Sequence[Row]) -> None:
        self.rows = [s for s in sections if s["level"] > 0]  # level 0 is the document itself
        self.by_id = {s["section_id"]: s for s in sections}
        self.doc_title = {s["doc_id"]: s["title"] for s in sections if s["level"] == 0}
        self.root = {s["doc_id"]: s for s in sections if s["level"] == 0}
        self.order = {s["section_id"]: i for i, s in enumerate(self.rows)}
        self.under = descendants(sections)
        self.by_number: dict[str, list[Row]] = {}
        self.by_title: dict[str, list[Row]] = {}
        self.by_part: dict[str, list[Row]] = {}
        for s in self.rows:
            if s.get("number"):
                self.by_number.setdefault(s["number"], []).append(s)
            title = fold(s.get("title"))
            if title:
                self.by_title.setdefault(title, []).append(s)
                for part in _parts_of(title):
                    if part != title:
                        self.by_part.setdefault(part, []).append(s)
        # titles worth finding unquoted, longest first (so the longer of nested titles is seen first)
        self.unquoted = sorted(
            (t for t in self.by_title if len(tokenize(t)) >= MIN_UNQUOTED_TITLE_WORDS), key=len, reverse=True
        )

    def _ids(self, found: Iterable[Row], allowed: set[str] | None) -> tuple[str, ...]:
        chosen = {d for s in found if allowed is None or s["doc_id"] in allowed for d in self.under[s["section_id"]]}
        # a document named whole (`_documents_named`) keeps its own quotes, those before any heading
        kept = [c for c in chosen if c in self.order or self.by_id[c]["level"] == 0]
        return tuple(sorted(kept, key=lambda c: (self.order.get(c, -1), c)))

    def resolve(self, question: str, doc_ids: Iterable[str] | None = None) -> list[Resolved]:
        """The sections a question names; `doc_ids`: only these documents (doc scope), None: all."""
        allowed = set(doc_ids) if doc_ids is not None else None
        out: list[Resolved] = []

        def add(text: str, how: str, found: Iterable[Row]) -> bool:
            found = self._documents_named(list(found), allowed)
            ids = self._ids(found, allowed)
            if ids:
                out.append(Resolved(text, how, ids))
            return bool(ids)

        for ref in find_references(question):
            if ref.kind in ("table", "figure"):
                continue  # items, not sections: `resolve_items`
            text = question[ref.start : ref.end]
            exact = [s for s in self.by_number.get(ref.key, []) if _kinds_agree(ref.kind, _kind_of(s.get("label")))]
            if not add(text, "label", exact):
                prefix = (ref.key + ".", ref.key + "-")
                add(text, "label-prefix", [s for n, ss in self.by_number.items() if n.startswith(prefix) for s in ss])

        quoted = [fold(p) for p in quoted_phrases(question)]
        for phrase in quoted:
            if add(phrase, "title", self.by_title.get(phrase, [])):
                continue
            series = [
                s
                for t, ss in self.by_title.items()
                if t.startswith(phrase) and _SERIES_TAIL.match(t[len(phrase) :])
                for s in ss
            ]
            if not add(phrase, "title-series", series) and len(tokenize(phrase)) >= MIN_UNQUOTED_TITLE_WORDS:
                add(phrase, "title-part", self.by_part.get(phrase, []))

        folded = fold(question)
        seen = [r.text for r in out]
        for title in self.unquoted:
            # "the eastern ford" inside "crossing the eastern ford" is not a second reference
            found = title in folded and not any(title in other for other in seen) and _word_in(folded, title)
            if found and add(title, "title", self.by_title[title]):
                seen.append(title)
        return most_specific(out)

    def _documents_named(self, found: list[Row], allowed: set[str] | None) -> list[Row]:
        """A heading that repeats its document's title (the cover's "A Guide to Home Composting")
        names the document, not the two quotes under it: the scope is the whole document, and in doc
        scope, where the question is already asked within it, no scope at all."""
        named = {s["doc_id"] for s in found if fold(s.get("title")) == fold(self.doc_title.get(s["doc_id"]))}
        if not named:
            return found
        rest = [s for s in found if s["doc_id"] not in named]
        if allowed is not None and len(allowed) == 1:
            named -= allowed
        return rest + [self.root[d] for d in named]

    def scoped_query(self, question: str, section_ids: Sequence[str]) -> str:
        """The question as it is asked within these sections: without the words every quote there
        carries in its contextual header (the path all of them share, their document's title).

        Inside "Orwen's Letters" every quote's header says "Orwen's Letters"; asked with those
        words, the shortest quotes (a salutation, a signature) win on the header alone. Without them
        the question's remaining words rank the quotes by what they say."""
        rows = [self.by_id[s] for s in section_ids if s in self.by_id]
        if not rows:
            return question
        shared = set.intersection(*(set(tokenize(s.get("path") or s.get("title") or "")) for s in rows))
        for doc_id in {s["doc_id"] for s in rows}:
            shared |= set(tokenize(self.doc_title.get(doc_id) or ""))
        kept = [t for t in tokenize(question) if t not in shared]
        return " ".join(kept) if kept else question

    def pages(self, section_ids: Iterable[str]) -> set[tuple[str, int]]:
        """(doc_id, page_idx) of every page the sections cover. A figure or table floats: the parser
        puts it where it was printed (often the top of a page, before the heading of the section that
        cites it), so a section's scope takes in the image quotes of its pages too."""
        rows = [self.by_id[s] for s in section_ids if s in self.by_id]
        return {(s["doc_id"], p) for s in rows for p in range(s["page_start"], s["page_end"] + 1)}


def resolve_references(question: str, sections: Sequence[Row], doc_ids: Iterable[str] | None = None) -> list[Resolved]:
    """The sections a question names (the one-call form of `SectionResolver.resolve`)."""
    return SectionResolver(sections).resolve(question, doc_ids)


@dataclass(frozen=True)
class ResolvedItem:
    text: str  # "Table 2-2"
    label: Label
    quote_ids: tuple[str, ...]  # the quotes whose caption starts with that label


# Kinds whose own text may open with their label: a caption quote, or a table or figure whose caption
# the parser kept inside the region (a table whose first line is its "Table 2-2 ..." caption).
LABELLED_KINDS = frozenset({"caption", "table", "figure", "chart", "image", "equation"})


def label_line(kind: str, caption: str | None, text: str | None) -> str | None:
    """The line that names a quote as a numbered item ("Table 2-2 Summary of ..."), or None."""
    if caption_label(caption) is not None:
        return caption
    first = (text or "").strip().split("\n", 1)[0]
    return first if kind in LABELLED_KINDS and caption_label(first) is not None else None


def item_labels(quotes: Iterable[tuple[str, str, str | None, str | None]]) -> dict[Label, list[str]]:
    """{label: quote ids} from (quote_id, kind, caption, text), by `label_line`."""
    out: dict[Label, list[str]] = {}
    for quote_id, kind, caption, text in quotes:
        line = label_line(kind, caption, text)
        if line is not None:
            out.setdefault(caption_label(line), []).append(quote_id)
    return out


def resolve_items(question: str, labels: Mapping[Label, Sequence[str]]) -> list[ResolvedItem]:
    """A question's "Table 2-2" / "Figure 3" (interleaf.text.references), resolved to the quotes
    captioned with that label."""
    out: list[ResolvedItem] = []
    for m in REFERENCE.finditer(question):
        label = caption_label(m.group(0))
        if label is not None and label in labels and all(r.label != label for r in out):
            out.append(ResolvedItem(m.group(0), label, tuple(labels[label])))
    return out
