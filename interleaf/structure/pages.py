"""The pages a question names: "the chart on page 14", "page(1)", "page two", "the first page", "the
last page", "the second last page", "the cover page", "on the back cover", "slide 7".

A page number in a question may be the file's (its 14th page) or the one the document prints on the
page: a report's page "9" is often the file's 12th, after a cover and a contents page, and a brochure
printing two pages on one sheet has pages "16" and "17" on its 10th. Both are taken. The numbers a
document prints are read from the quotes that hold a bare number: its running heads and feet, and
such a number the parser took for text where another page's number sits as far from the file's count.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from interleaf.expand.instructions import without_instructions

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBERED = re.compile(
    rf"\b(?:pages?|p\.|slides?)\s*\(?\s*(\d{{1,4}}|(?:{'|'.join(_NUMBER_WORDS)})(?![\w-]))\s*\)?(?![\w.,]\d)", re.I
)
_ORDINAL = re.compile(
    rf"\b({'|'.join(_ORDINALS)}|(?:second|2nd)[\s-]+(?:to[\s-]+)?last|penultimate|last|final|cover|front|back)"
    r"\s+(?:cover\s+)?(?:page|slide)\b",
    re.I,
)
# "on the cover", "the back cover": a document's first or last page (a cover page is _ORDINAL's; a
# cover letter is a letter)
_COVER = re.compile(
    r"\b(?:on|in|of|at|from)\s+((?:the|its|this|their)\s+(?:(front|back)\s+)?cover)\b(?!\s*(?:page|slide|letter))",
    re.I,
)
# what a question says is printed on a page: a table, or a figure by any of its names
_FLOAT_NOUN = (
    r"(?P<noun>tables?(?!\s+of\s+contents)|figures?|charts?|diagrams?|graphs?|plots?|images?|pictures?|photos?|photographs?|maps?"
    r"|illustrations?|infographics?)"
)
# a printed page number: "9", "Page 9", "- 9 -" (a running head or foot with a bare number)
_PRINTED = re.compile(r"^\W*(?:page\s+)?(\d{1,4})\W*$", re.I)


@dataclass(frozen=True)
class PageReference:
    text: str  # the question's words: "page 14", "the last page"
    number: int | None  # the page's number, 1-based; None for one counted from the end
    printed: bool  # the number may be the one printed on the page (not for "the cover", "the last page")
    counted: bool = False  # an ordinal ("the second page"): counted among the pages that hold anything too
    from_end: int = 0  # number None: 0 for the last page, 1 for the second last


def page_references(question: str) -> list[PageReference]:
    """Every page the question names, in order; not those of its format instructions ("formatted as
    a list about "Page X", for example ["Page 17"]")."""
    question = without_instructions(question)
    out = [PageReference(m.group(0).strip(), _number(m.group(1)), True) for m in _NUMBERED.finditer(question)]
    for m in _ORDINAL.finditer(question):
        word = m.group(1).casefold()
        if word in ("last", "final", "back"):
            out.append(PageReference(m.group(0), None, False))
        elif word.endswith("last") or word == "penultimate":
            out.append(PageReference(m.group(0), None, False, from_end=1))
        elif word in ("cover", "front"):
            out.append(PageReference(m.group(0), 1, False))
        else:
            out.append(PageReference(m.group(0), _ORDINALS.index(word) + 1, True, counted=True))
    for m in _COVER.finditer(question):
        side = (m.group(2) or "front").casefold()
        out.append(PageReference(m.group(1), 1 if side == "front" else None, False))
    return out


def _number(written: str) -> int:
    """ "14" or "two"."""
    return int(written) if written.isdigit() else _NUMBER_WORDS.index(written.casefold()) + 1


def printed_page_numbers(quotes: pa.Table, doc_ids: set[str] | None = None) -> dict[str, dict[int, set[int]]]:
    """doc_id -> a number the document prints as a page's number -> the page_idx (0-based) it is
    printed on; of the documents in `doc_ids` (None: every one). A quote that holds only a number is
    a page number where the parser marked it as furniture, or where another page prints one at the
    same distance from the file's count (a "(1)" on the fifth page the parser took for text, when
    the sixth prints "2"): a lone number elsewhere (a callout, a step) has no such partner."""
    # in Arrow first, the quotes that may hold a bare number: none with a run of 8 letters or marks
    keep = pc.invert(pc.fill_null(pc.match_substring_regex(quotes.column("text"), r"[^\d\s]{8}"), False))
    if doc_ids is not None:
        keep = pc.and_(keep, pc.is_in(quotes.column("doc_id"), value_set=pa.array(sorted(doc_ids), pa.string())))
    found: dict[str, list[tuple[int, int, bool]]] = defaultdict(list)  # doc -> (number, page_idx, furniture)
    for r in quotes.select(["doc_id", "page_idx", "text", "furniture"]).filter(keep).to_pylist():
        m = _PRINTED.match(r["text"] or "")
        if m:
            found[r["doc_id"]].append((int(m.group(1)), int(r["page_idx"]), bool(r["furniture"])))
    out: dict[str, dict[int, set[int]]] = {}
    for doc, numbers in found.items():
        pages_at_offset: dict[int, set[int]] = defaultdict(set)
        for number, page, _ in numbers:
            pages_at_offset[page - number].add(page)
        printed: dict[int, set[int]] = defaultdict(set)
        for number, page, furniture in numbers:
            if furniture or len(pages_at_offset[page - number]) > 1:
                printed[number].add(page)
        if printed:
            out[doc] = dict(printed)
    return out


def pages_named(reference: PageReference, pages: set[int], printed: dict[int, set[int]]) -> set[int]:
    """The page_idx of a document's `pages` (those it has) that the reference may mean: the file's
    page of that number, and the pages printed with that number."""
    if not pages:
        return set()
    held = sorted(pages)
    if reference.number is None:
        return {held[-1 - reference.from_end]} if reference.from_end < len(held) else set()
    named = {reference.number - 1}
    if reference.printed:
        named |= printed.get(reference.number, set())
    if reference.counted and reference.number <= len(held):
        # a blank page (a cover's empty back) holds nothing to read: "the second page" may be the
        # second that holds anything
        named.add(held[reference.number - 1])
    return named & pages


@dataclass(frozen=True)
class PageNumbering:
    """A document's pages (page_idx) and the numbers it prints on them."""

    pages: frozenset[int]
    printed: dict[int, set[int]]


def page_numbering(quotes: pa.Table, doc_ids: set[str]) -> dict[str, PageNumbering]:
    """doc_id -> its PageNumbering, for the documents in `doc_ids` that have quotes."""
    if not doc_ids:
        return {}
    mine = quotes.select(["doc_id", "page_idx"]).filter(
        pc.is_in(quotes.column("doc_id"), value_set=pa.array(sorted(doc_ids), pa.string()))
    )
    pages: dict[str, set[int]] = defaultdict(set)
    for r in mine.to_pylist():
        pages[r["doc_id"]].add(int(r["page_idx"]))
    printed = printed_page_numbers(quotes, set(pages))
    return {d: PageNumbering(frozenset(held), printed.get(d, {})) for d, held in pages.items()}


def named_pages(question: str, numbering: dict[str, PageNumbering]) -> frozenset[tuple[str, int]]:
    """(doc_id, page_idx) of every page of these documents the question names; empty when it names none."""
    return frozenset(
        (d, p)
        for reference in page_references(question)
        for d, n in numbering.items()
        for p in pages_named(reference, set(n.pages), n.printed)
    )


def float_on_named_page(question: str) -> tuple[str, str] | None:
    """("table" or "figure", the page's words) where the question speaks of a float on a page it
    names: "the diagram on page 6", "the table at page 23", "the images on the cover", "page 5's
    chart"; None otherwise. A chart, a map, a photo are figures to the parser; a table is a table."""
    for reference in page_references(question):
        page = re.escape(reference.text)
        before = rf"\b{_FLOAT_NOUN}\s+(?:[\w-]+\s+){{0,2}}?(?:on|at|in|of|from)\s+(?:the\s+)?{page}"
        after = rf"{page}(?:['’]s)?\s+{_FLOAT_NOUN}\b"
        m = re.search(before, question, re.I) or re.search(after, question, re.I)
        if m:
            return ("table" if m.group("noun").casefold().startswith("table") else "figure"), reference.text
    return None


def floats_by_page(quotes: pa.Table) -> dict[tuple[str, int], frozenset[str]]:
    """(doc_id, page_idx) -> the kinds of float ("figure", "table") the parser found on the page."""
    floats = quotes.select(["doc_id", "page_idx", "kind"]).filter(
        pc.is_in(quotes["kind"], pa.array(["figure", "table"]))
    )
    out: dict[tuple[str, int], set[str]] = defaultdict(set)
    for r in floats.to_pylist():
        out[(r["doc_id"], r["page_idx"])].add(r["kind"])
    return {page: frozenset(kinds) for page, kinds in out.items()}
