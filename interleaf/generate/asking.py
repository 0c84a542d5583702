"""What a question asks for, read from its words alone: its parts, and for each part the anchors an
answer must be about and the kind of value it must give.

A multi-part question asks several things ("How many ... and how long ...?", "What revenue and operating
margin ...?", "... Kestrel and Okapi each ..."): each part is answered, or said missing, on its own.
A part's anchors are what the evidence repeats verbatim: names and acronyms ("Norvane", "VELOX",
"Vireo-Omni"), code-like tokens ("BUILD_LEVEL", "Top-50", "HNO3"), numbers ("40 mg",
"Tier 4") and quoted phrases. Anchors that say where to look rather than what is asked
("according to RPT-31-20417", "the Kestrel paper", "Osprey Table 4") are sources, and float references
("Table 5") are locators: neither is required of the sentence that answers. A part wants a number
("how many", "what ... accuracy"), a date ("when"), an amount of a named currency ("how many
dollars"), or text.

Pure and model-free; the offline composer (offline.py) and the answer-level verdict (relevance.py)
read questions through it, so both judge "the documents do not say" the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from interleaf.expand.instructions import instructs_number, is_instruction, sentences
from interleaf.expand.rules import anchors
from interleaf.generate.months import MONTH
from interleaf.generate.sentences import content_words, numbers_in
from interleaf.generate.serial_lists import serial_list
from interleaf.text.references import REFERENCE

AnchorKind = Literal["name", "number", "quoted", "reference", "source", "time"]
Want = Literal["number", "date", "money", "code", "address", "text"]

_ENGLISH_WH = ("what", "which", "who", "whom", "whose", "when", "where", "why", "how")
_WH = r"(?:what|which|who|whom|whose|when|where|why|how|combien|quel|quelle|quels|quelles)"
# Where one question ends and the next begins: "?" or ";", and ", and how/what ..." (as the rules
# expander splits: interleaf/expand/rules.py)
_SPLIT_AND = re.compile(rf"(?:,\s*|\s+)(?:and|but|while|whereas)\s+(?={_WH}\b)", re.I)
# Words that end the phrase a wh-word asks about: "what [Top-5 ranking accuracy] does ...".
_VERBS = frozenset(
    """
    is are was were be been does do did has have had can could will would should may might must
    gives give gave given get gets got make makes made reach reaches reached hold holds offer offers assign assigns
    mean means come comes define defines take takes cost costs lose loses appear appears report reports
    use uses used keep kept remain remains contain contains allocate allocates score scores
    achieve achieves show shows list lists say says describe describes call calls cut cuts
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
# The wh-phrases that ask for a quantity; "what is the value of X" does not (a value may be *PERMIT).
_WANTS_NUMBER = re.compile(
    r"\b(?:how\s+(?:many|much|long|old|far|often|large|big|high|low|fast|tall|wide|heavy)|combien"
    r"|what\s+(?:percentage|percent|share|proportion|number|amount|fraction))\b",
    re.I,
)
_WANTS_DATE = re.compile(r"^(?:when|(?:what|which|in\s+which)\s+(?:date|year|month|day))\b", re.I)
# The first wh-word, and what comes before what it asks about: "how many", "what is the", "which type of".
# "how many [visitors]" asks about visitors; "how long is the permit valid" about no noun: a copula is skipped
# after "what is the", not after "how long".
_ASKING = re.compile(
    rf"\b(?:how\s+(?:many|much|long|old|far|often|large|big|high|low|fast|tall|wide|heavy)\b"
    rf"|combien\s+d(?:e\b|')|{_WH}\b(?:\s+(?:is|are|was|were)\b)?(?:\s+(?:the|a|an)\b)?)"
    r"(?:\s+(?:type|kind|sort)\s+of\b)?\s*",
    re.I,
)
# Words that say what kind of value is asked ("what [date]", "what [share]"), not what it is about,
# and counts the evidence need not repeat ("the five phases")
KIND_WORDS = frozenset(
    """
    one two three four five six seven eight nine ten first second third date year month day time number amount
    percentag percent share proport valu count
    """.split()  # noqa: SIM905
)
# Comparatives start no noun phrase: "how much [lower] is ...".
_COMPARATIVES = frozenset(
    ["lower", "higher", "more", "less", "fewer", "larger", "smaller", "better", "worse", "longer", "shorter"]
)
# The superlatives a question asks for an extreme by: "the highest", "the fewest".
MOST = re.compile(
    r"\b(?:highest|largest|biggest|greatest|most|best|maximum|peaks?|longest|strongest|top(?![-‐–]?\d))\b", re.I
)
LEAST = re.compile(r"\b(?:lowest|smallest|fewest|least|minimum|worst|shortest|weakest)\b", re.I)
_PREPOSITIONS = frozenset(
    ("for", "of", "in", "on", "at", "to", "with", "by", "from", "according", "among", "between", "per")
)
# A measured quantity named as what is asked: "what [Top-3 accuracy]", "what VELOX [score]".
_MEASURES = frozenset(
    """
    accuracy accuracies score scores rate rates ratio ratios percentage percentages percent share proportion
    count number amount cost costs price prices recall precision f1 f1-score revenue profit
    income sales speed duration potential length size weight mass temperature density throughput latency counts
    """.split()  # noqa: SIM905
)
# "how many dollars": the amount must be given in that currency.
CURRENCIES: dict[str, tuple[str, ...]] = {
    "dollar": ("$", "usd", "dollar"),
    "euro": ("€", "eur", "euro"),
    "pound": ("£", "gbp", "pound"),
    "yen": ("¥", "jpy", "yen"),
    "rupee": ("₹", "inr", "rupee", "rs"),
    "won": ("₩", "krw", "won"),
}
_CURRENCY = re.compile(r"\b(dollar|euro|pound|yen|rupee|won)s?\b", re.I)
_AUX = ("is", "are", "was", "were", "does", "do", "did", "has", "have", "appear", "appears", "say", "says")
_DOC_NOUN = (
    r"(?:paper|article|report|brief|guide|handbook|manual|book|booklet|overview|study|document"
    r"|website|presentation|slides|thesis|survey|memo|guidelines?|page)"
)
_DOC_NOUN_WORDS = re.sub(r"[^a-z]+", " ", _DOC_NOUN.replace("guidelines?", "guideline"))
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
_QUOTED = re.compile(r"(?<!\w)[\"“'‘]([^\"“”‘’]{3,80}?)[\"”'’](?!\w)")
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
# A fiscal year written with its prefix ("FY2019", "FY 2024"): the year is what a report prints
_FISCAL_YEAR = re.compile(r"(?<!\w)FY\s?'?((?:19|20)\d\d)(?!\w)")
# What a "what code / ID" question wants back: a token of letters and digits ("K42.7", "QSYSMODE").
_CODE_HEADS = frozenset(("code", "codes", "id", "ids", "identifier", "identifiers", "symbol", "abbreviation"))
# What a "which website / what email address" question wants back: a web or email address
# (sentences.WEB_ADDRESS); "the address of …" alone may be a street's
_ADDRESS_HEADS = frozenset(("website", "websites", "url", "urls", "web", "email", "e-mail", "homepage", "webpage"))
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:-\d+)?%?(?![\w])")
# What the expander's anchors must look like to be names here: no clause ("'s 12th Annual Shareholder
# Forum set for next spring, as the report says'" is two apostrophes, not a quotation).
_NAME_LIKE = re.compile(r"[\w@*.+/-]+(?:\s+[\w@*.+/&-]+){0,5}")
_NAME_COMPOUND = re.compile(r"(?<=[A-Za-z0-9])-(?:based|derived|related|specific|like|style|sized|free|only)$")
_POSSESSIVE = re.compile(r"['’]s?$")
_TRAILING_FLOAT = re.compile(r"\s+(?:Table|Figure|Fig\.?|Chart)$")
_NOT_NAMES = frozenset(
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


@dataclass(frozen=True)
class Part:
    """One thing the question asks."""

    text: str
    anchors: tuple[Anchor, ...]
    want: Want
    focus: frozenset[str]  # stemmed content words of the phrase the wh-word asks about
    numbers: frozenset[str]  # the question's own numbers: a value that answers is another one
    currency: str | None = None  # "dollar": the amount must be in dollars

    @property
    def required(self) -> tuple[Anchor, ...]:
        return tuple(a for a in self.anchors if a.required)


def question_parts(question: str, is_label: Callable[[str], bool] | None = None) -> list[Part]:
    """The parts of a question, in order (one part for a simple question); none for a blank one.
    `is_label`: whether the documents print a phrase as a label of its own (a table's row, a line):
    "Fees and commissions" is then one thing asked, not two."""
    question = " ".join(question.split())
    if not question:
        return []
    if _shouted(question):  # "WHAT IS THE 3rd PRIORITY OF ...": its capitals mark no name
        question = question.lower()
    numbers = frozenset(numbers_in(question))
    sources = _source_spans(question)
    out: list[Part] = []
    for text in _split(question):
        for sub in _distribute(text, is_label):
            out.append(_part(sub, numbers, sources, question))
    if instructs_number(question):  # "How many ...? Give me an integer.": each part wants a number
        out = [replace(p, want="number") if p.want == "text" else p for p in out]
    return out


def _shouted(question: str) -> bool:
    """Most of the question's letters are capitals: written in capitals, not naming with them."""
    letters = [c for c in question if c.isalpha()]
    return sum(c.isupper() for c in letters) * 2 > len(letters)


def _split(question: str) -> list[str]:
    pieces = sentences(question)
    pieces = pieces[:1] + [p for p in pieces[1:] if not is_instruction(p) or _asking(p)]
    out: list[str] = []
    for p in pieces:
        out += [s.strip(" ,") for s in _SPLIT_AND.split(p) if s.strip(" ,")]
    return out or [question]


def _distribute(part: str, is_label: Callable[[str], bool] | None = None) -> list[str]:
    """One part per item where the question coordinates what it asks ("What revenue and operating margin
    did ...") or who it asks it of ("can Kestrel and Okapi/Solr each process"); not where the documents
    print the coordinated words as one label ("what is Fees and commissions")."""
    each = re.search(r"\b([\w./+-]+(?:\s+[\w./+-]+){0,2})\s+and\s+([\w./+-]+(?:\s+[\w./+-]+){0,2})\s+each\b", part)
    if each:
        left, right = each.group(1).split()[-1], each.group(2)
        head, tail = part[: each.start()], part[each.end() :]
        lead = each.group(1)[: -len(left)]
        return [f"{head}{lead}{left}{tail}".strip(), f"{head}{lead}{right}{tail}".strip()]
    wh = _wh_phrase(part)
    if wh is not None:
        start, end = wh
        phrase = part[start:end]
        items = [i for i in re.split(r"\s*,\s*|\s+and\s+", phrase) if i.strip()]
        if len(items) > 1 and " and " in phrase and not (is_label is not None and is_label(phrase)):
            return [f"{part[:start]}{item}{part[end:]}" for item in items]
    listed = serial_list(part, _NOT_NAMES | _PREPOSITIONS)
    if listed is not None and not _picks_among(part) and not (is_label and is_label(part[listed.start : listed.end])):
        return listed.each(part)
    return [part]


_TAKEN_TOGETHER = frozenset(
    """
    between compare compared difference versus vs respectively total sum combined altogether together average
    averaged overall
    """.split()  # noqa: SIM905 (a word list reads best as words)
)


def _picks_among(part: str) -> bool:
    """The question picks or compares among what it lists ("which of A, B, and C grew the most"),
    adds them up ("A, B, and C in total"), or pairs them with values itself ("respectively"): it is
    not asked of each item apart."""
    asking = _asking(part)
    words = {w.casefold() for w in re.findall(r"[\w-]+", part)}
    picks = asking is not None and asking.group(0).split()[0].casefold() in ("which", "who", "whom", "whose")
    return (
        picks
        or MOST.search(part) is not None
        or LEAST.search(part) is not None
        or bool(words & _COMPARATIVES)
        or bool(words & _TAKEN_TOGETHER)
    )


def _asking(part: str) -> re.Match[str] | None:
    """The first wh-word outside quotes ("the 'How rivers form' diagram" names, it does not ask)."""
    return _ASKING.search(_QUOTED.sub(lambda q: "_" * len(q.group(0)), part))


def _wh_phrase(part: str) -> tuple[int, int] | None:
    """The span of what the first wh-word asks about: "what [Top-5 ranking accuracy] does",
    "what is the [three-year retention rate] for", "how many [visitors] get"."""
    m = _asking(part)
    if m is None:
        return None
    end = m.end()
    words = list(re.finditer(r"\S+", part[m.end() :]))
    for i, w in enumerate(words):
        token = w.group(0).strip(",?;:()").casefold()
        if token in _VERBS or token in _PREPOSITIONS or not token or (end == m.end() and token in _COMPARATIVES):
            break
        if end > m.end() and len(token) > 4 and token.endswith("ed") and not _noun_follows(words, i):
            break  # "the five phases [depicted] in": a participle after the noun ends the phrase
        end = m.end() + w.start() + len(w.group(0).rstrip(",?;:"))
        if w.group(0).endswith((",", "?", ";", ":")) or w.start() > 60:
            break
    return (m.end(), end) if end > m.end() else None


def _noun_follows(words: list[re.Match[str]], i: int) -> bool:
    """The word after the i-th goes on the noun phrase: "[diluted] earnings", "[weighted] average" (an
    adjective in -ed), not "[depicted] in the figure" or a last word (a participle)."""
    if i + 1 >= len(words) or words[i].group(0).endswith((",", "?", ";", ":")):
        return False
    after = words[i + 1].group(0).strip(",?;:()").casefold()
    return bool(after) and after not in _VERBS and after not in _PREPOSITIONS and after not in _NOT_NAMES


def _part(text: str, numbers: frozenset[str], sources: list[tuple[int, int, str]], question: str) -> Part:
    wh = _wh_phrase(text)
    focus_text = text[wh[0] : wh[1]] if wh else ""
    asked_in = _asking(text)
    if asked_in and asked_in.group(0).split()[0].casefold() not in _ENGLISH_WH:
        focus_text = ""  # the phrase of a question in another language is not read here
    words = [w for w in content_words(focus_text) if w not in KIND_WORDS]
    # what is asked is the phrase's head and the word before it: "the three-year [retention rate]",
    # "how many [visitors]"; further modifiers ("three-year") are too common to tell a sentence about it
    # from one that is not, and each of the two must be there ("a local tax rate" is no retention rate)
    focus = frozenset(words[-2:])
    head_word = focus_text.split()[-1].casefold().strip("?,()") if focus_text.split() else ""
    currency_match = _CURRENCY.search(focus_text) or _CURRENCY.search(text)
    currency = currency_match.group(1).casefold() if currency_match else None
    head = set(re.findall(r"[a-z0-9]+", " ".join(focus_text.split()[-2:]).casefold()))
    want: Want = "text"
    if head_word in _CODE_HEADS:
        want = "code"
    elif currency:
        want = "money"
    elif (asking := _asking(text)) and _WANTS_DATE.match(text[asking.start() :]):
        want = "date"
    elif _WANTS_NUMBER.search(text) or head & _MEASURES:
        want = "number"
    elif head & _ADDRESS_HEADS or head_word in _ADDRESS_HEADS:
        want = "address"
        # the address is what says "website": a page lists "Coastal Care QLD coastalcare.org.au"
        focus = focus - set(content_words(" ".join(_ADDRESS_HEADS) + " address addresses"))
    source_texts = [s for _, _, s in sources]
    return Part(text, tuple(_anchors(text, source_texts)), want, focus, numbers, currency)


def _source_spans(question: str) -> list[tuple[int, int, str]]:
    out = []
    for pattern in _SOURCES:
        for m in pattern.finditer(question):
            words = m.group(1).split()
            while words and words[0].casefold() in _NOT_NAMES:
                words.pop(0)  # "In Kestrel Table 3": the name is Kestrel
            if words:
                out.append((m.start(1), m.end(1), " ".join(words)))
    return out


def _anchors(text: str, sources: list[str]) -> list[Anchor]:
    found: dict[str, Anchor] = {}
    text = _FISCAL_YEAR.sub(r"\1", text)  # "FY2019" dates the question as "2019" does; reports write the year

    def add(value: str, kind: AnchorKind) -> None:
        value = _POSSESSIVE.sub("", value.strip(" ,.;:?()"))
        value = _NAME_COMPOUND.sub("", value)  # "Zenthos-derived": the name is Zenthos
        value = _TRAILING_FLOAT.sub("", value)
        key = value.casefold()
        if not value or key in _NOT_NAMES or any(_within(key, k) for k in found):
            return
        for k in [k for k in found if _within(k, key)]:  # "WS TRACE" over "TRACE"
            del found[k]
        if kind not in ("reference", "quoted") and any(value in s for s in sources):
            kind = "source"
        found[key] = Anchor(value, kind)

    for m in REFERENCE.finditer(text):
        add(m.group(0), "reference")
    for m in _QUOTED.finditer(text):
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


def asked_words(part: Part) -> set[str]:
    """The part's words that say what it is about: its content words without the question's verbs
    ("what does Figure 3 [show]"), the words saying what kind of value it wants, or its sources."""
    sources = {w for a in part.anchors if a.kind in ("source", "reference") for w in content_words(a.text)}
    unasked = set(content_words(" ".join(_VERBS))) | set(content_words(_DOC_NOUN_WORDS))  # "the Kestrel [paper]"
    return set(content_words(part.text)) - KIND_WORDS - sources - unasked


def _within(short: str, long: str) -> bool:
    """`short` is whole words of `long` ("ws" of "ws trace", "50" of "top-50"), not part of one
    ("level" of "build_level")."""
    a, b = [w for w in re.split(r"\W+", short) if w], [w for w in re.split(r"\W+", long) if w]
    return any(b[i : i + len(a)] == a for i in range(len(b) - len(a) + 1))


def want_label(part: Part) -> str:
    """How a reason names what the part wants: "a number", "an amount in dollars"."""
    return {
        "number": "a number",
        "date": "a date",
        "money": f"an amount in {part.currency}s" if part.currency else "an amount",
        "code": "a code",
        "address": "a web or email address",
        "text": "an answer",
    }[part.want]
