"""The anchors of a question's part: what the evidence that answers it must repeat verbatim, and what
only says where to look.

Names and acronyms ("Norvane", "VELOX", "Vireo-Omni"), code-like tokens ("BUILD_LEVEL", "Top-50",
"HNO3"), numbers ("40 mg", "Tier 4") and quoted phrases must be in the sentence that answers. Phrases
that name the source ("according to RPT-31-20417", "the Kestrel paper", "Osprey Table 4") and float
references ("Table 5") guide the search and are not required; a year or a day of a month dates the
question as a source places it. Read by asking.py for each part of a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from interleaf.expand.rules import anchors
from interleaf.generate.months import DAY_SPAN, MONTH
from interleaf.text.references import REFERENCE

AnchorKind = Literal["name", "number", "quoted", "reference", "source", "time"]

_AUX = ("is", "are", "was", "were", "does", "do", "did", "has", "have", "appear", "appears", "say", "says")
_DOC_NOUN = (
    r"(?:paper|article|report|brief|guide|handbook|manual|book|booklet|overview|study|document"
    r"|website|presentation|slides|thesis|survey|memo|guidelines?|page)"
)
DOC_NOUN_WORDS = re.sub(r"[^a-z]+", " ", _DOC_NOUN.replace("guidelines?", "guideline"))
_NAME = r"[A-Z][\w.&/+-]*(?:\s+(?:of\s+|for\s+|the\s+|and\s+)?[A-Z0-9][\w.&/+-]*)*"
# Phrases that name the source, not the thing asked: "according to X", "X's Figure 2", "the Kestrel
# paper", "Osprey Table 4", and a closing "in A Guide to Home Composting?".
_SOURCES = [
    re.compile(r"\baccording\s+to\s+(?:the\s+)?([^,?;]+)", re.I),
    re.compile(rf"\b({_NAME})['’]s?\s+(?:(?i:{REFERENCE.pattern})|{_DOC_NOUN}\b)"),
    re.compile(rf"\b(?:the|its|this|that)\s+((?:[\w.&/+-]+\s+){{0,5}}?){_DOC_NOUN}\b", re.I),
    re.compile(rf"\b({_NAME})\s+(?=(?i:{REFERENCE.pattern}))"),
    re.compile(rf"\b(?:in|of|from)\s+({_NAME}\s+{_NAME})\s*[?.]?\s*$"),
    # what the source is about: "Hale's paper on lattice filters", "the report on crop insurance"
    re.compile(rf"\b{_DOC_NOUN}\s+(?:on|about)\s+([^,?;()]+?)(?=\s*[(,?;]|\s+(?:{'|'.join(_AUX)})\b|$)", re.I),
]
# A locator: a quoted name of a float ("the 'How rivers form' diagram").
_LOCATOR_NOUN = re.compile(r"^\s*(?:diagram|figure|table|chart|graph|panel|illustration|section|box)\b", re.I)
QUOTED = re.compile(r"(?<!\w)[\"“'‘]([^\"“”‘’]{3,80}?)[\"”'’](?!\w)")
# Code-like tokens the expander's entity pattern can miss after a capitalised wh-word ("What VELOX"):
# capitals after the first letter, letters with digits, `_` or `@`.
_CODE = re.compile(
    r"(?<![\w@])(?=[\w@*.+/-]*(?:[A-Za-z][\w@*.+/-]*[A-Z]|\d[\w.-]*[A-Za-z]|[A-Za-z][\w.-]*\d|_|@))"
    r"[*]?[A-Za-z0-9][\w@*.+/-]*[\w%]"
)
# "Norvane", "Aldric", and with its numeral "Stage I", "Tier 4", "Grade 3"
_CAPITALISED = re.compile(
    r"(?<![\w'’-])[A-Z][a-z]{2,}(?:[-'’][A-Za-z]+)*(?:\s+[A-Z][a-z]+(?:[-'’][A-Za-z]+)*)*"
    r"(?:\s+(?:[IVX]+|\d{1,3}[a-z]?)\b)?(?![\w-])"
)
# A year or a span of years ("2026", "2026-27") dates the question, as a source places it: a report
# for 2026-27 does not repeat the year in each sentence.
_YEAR = re.compile(r"^(?:1[89]|20)\d\d(?:[-–/](?:\d\d|(?:1[89]|20)\d\d))?$")
# A day of a month ("August 14", "14th August"): a date places the question as a year does, and
# documents write it in many ways ("14.08.2019", "14th August")
_MONTH_DAY = re.compile(rf"(?i:{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH})")
# A span of days ("June 11-August 27", "October 29 - November 4", "March 3-20"): one time, not a name
# "11-August" and a required number "27"; its year stands apart and dates it as any year does.
# Worth, on the dev half: its one answerable question that was refused for the span is answered, and
# the unanswerable twins (another year) stay refused
_DAY_SPAN = re.compile(rf"(?i:{DAY_SPAN})(?!\d)")
# A fiscal year written with its prefix ("FY2019", "FY 2024"): the year is what a report prints
_FISCAL_YEAR = re.compile(r"(?<!\w)FY\s?'?((?:19|20)\d\d)(?!\w)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:-\d+)?%?(?![\w])")
# What the expander's anchors must look like to be names here: no clause ("'s 12th Annual Shareholder
# Forum set for next spring, as the report says'" is two apostrophes, not a quotation).
_NAME_LIKE = re.compile(r"[\w@*.+/-]+(?:\s+[\w@*.+/&-]+){0,5}")
_NAME_COMPOUND = re.compile(r"(?<=[A-Za-z0-9])-(?:based|derived|related|specific|like|style|sized|free|only)$")
_POSSESSIVE = re.compile(r"['’]s?$")
_TRAILING_FLOAT = re.compile(r"\s+(?:Table|Figure|Fig\.?|Chart)$")
NOT_NAMES = frozenset(
    """
    what which who whom whose when where why how in on at the a an according for from of to by with and
    is are was were does do did can could would should will among between without within after before
    during under over using based given combien quel quelle
    """.split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Anchor:
    text: str  # as the question writes it
    kind: AnchorKind

    @property
    def required(self) -> bool:
        """The sentence that answers must hold it (sources and float references only guide the search)."""
        return self.kind in ("name", "number", "quoted")


def source_spans(question: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each phrase of the question that names its source ("according to X")."""
    out = []
    for pattern in _SOURCES:
        for m in pattern.finditer(question):
            words = m.group(1).split()
            while words and words[0].casefold() in NOT_NAMES:
                words.pop(0)  # "In Kestrel Table 3": the name is Kestrel
            if words:
                out.append((m.start(1), m.end(1), " ".join(words)))
    return out


def question_anchors(text: str, sources: list[str]) -> list[Anchor]:
    """The anchors of a part's `text`; one within a phrase of `sources` is a source, not required."""
    found: dict[str, Anchor] = {}
    text = _FISCAL_YEAR.sub(r"\1", text)  # "FY2019" dates the question as "2019" does; reports write the year

    def add(value: str, kind: AnchorKind) -> None:
        value = _POSSESSIVE.sub("", value.strip(" ,.;:?()"))
        value = _NAME_COMPOUND.sub("", value)  # "Zenthos-derived": the name is Zenthos
        value = _TRAILING_FLOAT.sub("", value)
        key = value.casefold()
        if not value or key in NOT_NAMES or any(_within(key, k) for k in found):
            return
        for k in [k for k in found if _within(k, key)]:  # "WS TRACE" over "TRACE"
            del found[k]
        if kind not in ("reference", "quoted") and any(value in s for s in sources):
            kind = "source"
        found[key] = Anchor(value, kind)

    for m in _DAY_SPAN.finditer(text):
        add(m.group(0), "time")
    text = _DAY_SPAN.sub(" ; ", text)  # nor is its month the end of a name ("the Norvane Survey June")
    for m in REFERENCE.finditer(text):
        add(m.group(0), "reference")
    for m in QUOTED.finditer(text):
        after = text[m.end() :]
        add(m.group(1), "reference" if _LOCATOR_NOUN.match(after) else "quoted")
    for a in anchors(text):
        if REFERENCE.fullmatch(a) or a.casefold() in (k for k in found) or not _NAME_LIKE.fullmatch(a):
            continue
        if _NUMBER.fullmatch(a):
            add(a, "number")
        else:
            add(a, "name")
    for m in _CODE.finditer(text):
        add(m.group(0), "number" if _NUMBER.fullmatch(m.group(0)) else "name")
    first = re.match(r"\W*\w+", text)
    for m in _CAPITALISED.finditer(text):
        if first and m.start() < first.end():
            continue  # the question's first word is capitalised as every first word is
        add(m.group(0), "name")
    for m in _NUMBER.finditer(text):
        if not any(m.group(0) in a.text and a.kind != "number" for a in found.values()):
            add(m.group(0), "number")
    return [
        # a year dates the question wherever it stands ("the survey of May 28 - June 3 2019" too)
        Anchor(a.text, "time")
        if (a.kind in ("number", "source") and _YEAR.match(a.text)) or _MONTH_DAY.fullmatch(a.text)
        else a
        for a in found.values()
    ]


def _within(short: str, long: str) -> bool:
    """`short` is whole words of `long` ("ws" of "ws trace", "50" of "top-50"), not part of one
    ("level" of "build_level")."""
    a, b = [w for w in re.split(r"\W+", short) if w], [w for w in re.split(r"\W+", long) if w]
    return any(b[i : i + len(a)] == a for i in range(len(b) - len(a) + 1))
