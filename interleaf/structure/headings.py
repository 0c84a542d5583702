"""Numbered headings: the labels a reader navigates long documents by.

"7.4.12.6", "Exhibit 7.4.12-12", "Chapter 12", "Appendix B", "Section 4.2", "Part III": a label is a
kind word (optional for dotted numbers) and a number. Parsed from the first line of a quote, from an
outline entry's title, from a running header ("Exhibit 7.4.12-14 (Cont'd 2) (05-22-2019)") or from a
question's words, they all reduce to one comparable `key`, so a question's "Exhibit 7.4.12-14" finds
the outline's "7.4.12-14   Quarterly Account Summary".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from interleaf.text.references import NUMBER

# Kind words that introduce a numbered unit. Lower case; "fig." and "sec." are read as their full word.
KIND_WORDS: dict[str, str] = {
    "exhibit": "exhibit",
    "appendix": "appendix",
    "annex": "annex",
    "attachment": "attachment",
    "schedule": "schedule",
    "chapter": "chapter",
    "ch.": "chapter",
    "section": "section",
    "sec.": "section",
    "§": "section",
    "part": "part",
    "article": "article",
    "art.": "article",
    "book": "book",
    "volume": "volume",
    "vol.": "volume",
    "table": "table",
    "figure": "figure",
    "fig.": "figure",
}
# Kinds whose label names a whole stretch of the document (a section); tables and figures name one item.
SECTION_KINDS = frozenset(KIND_WORDS.values()) - {"table", "figure"}

_DASH = "\\-\u2010\u2011\u2012\u2013\u2014"  # escaped for character classes
# the shared number grammar ("3", "3b", "2-2", "5.4", "IV"; interleaf.text.references), plus what
# structural labels add: any dash between parts ("7.4.12‑14"), full roman numerals ("Part XL"), and a
# capital letter, alone or with parts ("Appendix B", "Annex A.2")
_NUM = rf"(?:{NUMBER}|\d+(?:\.\d+)*(?:[{_DASH}]\d+)+|[IVXLCDM]+|[A-Z](?:[.{_DASH}]\d+)*)"
_KIND_RE = "|".join(re.escape(k) for k in sorted(KIND_WORDS, key=len, reverse=True))
# "Exhibit 7.4.12-14", "Chapter 12", "Appendix B", "Section 7.4.12.6" (the kind word is required)
# the kind word in any case, then a space ("§" may touch its number); the number keeps its case: "Appendix B"
LABELLED = re.compile(rf"(?<![\w.])(?P<kind>(?i:{_KIND_RE}))(?:\s+|(?<=§))(?P<num>{_NUM})(?![\w{_DASH}]|\.\d)")
# a bare dotted or hyphenated number at the start of a heading: "7.4.12.6", "7.4.12-14", "4.2"
DOTTED = re.compile(rf"^(?P<num>\d+(?:\.\d+)+(?:[{_DASH}]\d+)?|\d+(?:[{_DASH}]\d+)+)(?![\w.{_DASH}])")
CONTINUED = re.compile(r"\((?:cont(?:inued|'d|\.)?(?:\s*\d+)?)\)|\bcontinued\b|\bcont\.\s*\d*", re.IGNORECASE)
_DATE = re.compile(rf"\(\s*\d{{1,2}}[{_DASH}/]\d{{1,2}}[{_DASH}/]\d{{2,4}}\s*\)")
_ROMAN = re.compile(r"^[IVXLCDM]+$")
# a heading's first line is short; a longer one is a sentence that starts with a number
MAX_HEADING_WORDS = 14


@dataclass(frozen=True)
class Heading:
    kind: str  # exhibit, chapter, section, ... ; "" for a bare dotted number
    number: str  # dashes folded to "-": "7.4.12-14"
    title: str  # the words after the label, dates and continuation marks removed
    continued: bool = False  # "(Cont'd 2)": a running header of a unit that started earlier

    @property
    def key(self) -> str:
        return number_key(self.number)

    @property
    def label(self) -> str:
        return f"{self.kind.capitalize()} {self.number}" if self.kind else self.number

    @property
    def depth(self) -> int:
        """Nesting by the number itself: 7.4.12 -> 3, 7.4.12.6 -> 4, 7.4.12-14 -> 4 (an exhibit of 7.4.12)."""
        return len(re.split(r"[.\-]", self.number))

    @property
    def parent_key(self) -> str | None:
        """The number this one nests under: 7.4.12.6 -> 7.4.12, 7.4.12-14 -> 7.4.12, 4 -> None."""
        parts = re.split(r"([.\-])", self.number)
        return number_key("".join(parts[:-2])) if len(parts) >= 3 else None


def number_key(number: str) -> str:
    """The comparable form of a number: dashes folded, case folded, no trailing dot."""
    return re.sub(f"[{_DASH}]", "-", number).strip(".").casefold()


# where a heading's words end and its body begins: a numbered paragraph "(1)" or a sentence's end
_BODY_START = re.compile(r"\(\d+\)|\.\s|\n\n")
MAX_TITLE_WORDS = 16


def clean_title(text: str) -> tuple[str, bool]:
    """(the heading's words, whether it says it continues): ligatures unfolded ("ﬁ" -> "fi"), dates,
    continuation marks and the body after the heading dropped."""
    text = unicodedata.normalize("NFKC", text).replace("/ ", "/")
    continued = bool(CONTINUED.search(text))
    text = CONTINUED.sub(" ", text)
    text = _DATE.sub(" ", text)
    body = _BODY_START.search(text)
    if body:
        text = text[: body.start()]
    words = text.split()[:MAX_TITLE_WORDS]
    return " ".join(words).strip(" :.-\u2013\u2014"), continued


def parse_heading(text: str, allow_bare: bool = True) -> Heading | None:
    """The heading a quote or outline entry starts with, or None.

    `allow_bare`: accept a bare dotted number ("7.4.12.6 Background"); an outline entry or a quote's
    own first line can be one, a sentence in a paragraph cannot (hence the first-line length limit)."""
    stripped = text.strip()
    if not stripped:
        return None
    first_line = stripped.splitlines()[0].strip()
    if len(first_line.split()) > MAX_HEADING_WORDS:
        return None
    m = LABELLED.match(first_line)
    if m:
        kind = KIND_WORDS[m.group("kind").casefold()]
        number = m.group("num")
        if _ROMAN.match(number) and kind not in ("part", "book", "volume", "chapter", "appendix", "annex", "article"):
            return None
        rest = first_line[m.end() :] + " " + " ".join(stripped.splitlines()[1:3])
        title, continued = clean_title(rest)
        return Heading(kind, re.sub(f"[{_DASH}]", "-", number), title, continued)
    if allow_bare:
        m = DOTTED.match(first_line)
        if m:
            rest = first_line[m.end() :]
            # "7.4.12.5 (01-16-2020) Restoring access ..." or "4.2 Results"; not "5.3 percent of ..."
            if rest.strip() and not re.match(r"\s*(?:\(|[A-Z])", rest):
                return None
            lines = stripped.splitlines()[1:4]
            title, continued = clean_title(rest + " " + " ".join(lines))
            return Heading("", re.sub(f"[{_DASH}]", "-", m.group("num")), title, continued)
    return None


@dataclass(frozen=True)
class Reference:
    """A label a question or a sentence mentions: "Exhibit 7.4.12-12", "Section 7.4.12.6", "Table 2-2"."""

    kind: str  # "" where the text gave none
    number: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return number_key(self.number)


# a dotted number standing alone in running text: "section 7.4.12.6" is caught by LABELLED, this
# catches "see 7.4.12.6" (at least three components, so "3.5 million" is not a reference)
_BARE_IN_TEXT = re.compile(rf"(?<![\w.{_DASH}])(?P<num>\d+(?:\.\d+){{2,}}(?:[{_DASH}]\d+)?)(?![\w{_DASH}]|\.\d)")


def find_references(text: str) -> list[Reference]:
    """Every labelled reference in running text, then bare multi-level numbers not already covered."""
    refs = [
        Reference(KIND_WORDS[m.group("kind").casefold()], re.sub(f"[{_DASH}]", "-", m.group("num")), m.start(), m.end())
        for m in LABELLED.finditer(text)
        if not _ROMAN.match(m.group("num")) or m.group("kind").casefold() in ("part", "book", "volume", "chapter")
    ]
    covered = [(r.start, r.end) for r in refs]
    for m in _BARE_IN_TEXT.finditer(text):
        if not any(s <= m.start() < e for s, e in covered):
            refs.append(Reference("", re.sub(f"[{_DASH}]", "-", m.group("num")), m.start(), m.end()))
    return sorted(refs, key=lambda r: r.start)
