"""What a question asks for, read from its words alone: its parts, and for each part the anchors an
answer must be about and the kind of value it must give.

A multi-part question asks several things ("How many ... and how long ...?", "What revenue and operating
margin ...?", "... Kestrel and Okapi each ..."): each part is answered, or said missing, on its own.
A part's anchors (question_anchors.py) are what the evidence must repeat verbatim, and what only
says where to look. A part wants a number ("how many", "what ... accuracy"), a date ("when"), an
amount of a named currency ("how many dollars"), or text.

Pure and model-free; the offline composer (offline.py) and the answer-level verdict (relevance.py)
read questions through it, so both judge "the documents do not say" the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from interleaf.expand.instructions import asks_quantity, instructs_number, is_instruction, sentences
from interleaf.generate.question_anchors import (
    DOC_NOUN_WORDS,
    NOT_NAMES,
    QUOTED,
    Anchor,
    question_anchors,
    source_spans,
)
from interleaf.generate.sentences import content_words, numbers_in
from interleaf.generate.serial_lists import serial_list

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
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def without_article(folded: str) -> str:
    """A folded phrase without the article it opens with: "the kettle scale" -> "kettle scale"."""
    return _ARTICLE.sub("", folded)


_CURRENCY = re.compile(r"\b(dollar|euro|pound|yen|rupee|won)s?\b", re.I)
# What a "what code / ID" question wants back: a token of letters and digits ("K42.7", "QSYSMODE").
_CODE_HEADS = frozenset(("code", "codes", "id", "ids", "identifier", "identifiers", "symbol", "abbreviation"))
# What a "which website / what email address" question wants back: a web or email address
# (sentences.WEB_ADDRESS); "the address of …" alone may be a street's
_ADDRESS_HEADS = frozenset(("website", "websites", "url", "urls", "web", "email", "e-mail", "homepage", "webpage"))


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
    sources = source_spans(question)
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
    wh = wh_phrase(part)
    if wh is not None:
        start, end = wh
        phrase = part[start:end]
        items = [i for i in re.split(r"\s*,\s*|\s+and\s+", phrase) if i.strip()]
        if len(items) > 1 and " and " in phrase and not (is_label is not None and is_label(phrase)):
            return [f"{part[:start]}{item}{part[end:]}" for item in items]
    listed = serial_list(part, NOT_NAMES | _PREPOSITIONS)
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
    return _ASKING.search(QUOTED.sub(lambda q: "_" * len(q.group(0)), part))


def wh_phrase(part: str) -> tuple[int, int] | None:
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
    return bool(after) and after not in _VERBS and after not in _PREPOSITIONS and after not in NOT_NAMES


def _part(text: str, numbers: frozenset[str], sources: list[tuple[int, int, str]], question: str) -> Part:
    wh = wh_phrase(text)
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
    elif asks_quantity(text) or head & _MEASURES:
        want = "number"
    elif head & _ADDRESS_HEADS or head_word in _ADDRESS_HEADS:
        want = "address"
        # the address is what says "website": a page lists "Coastal Care QLD coastalcare.org.au"
        focus = focus - set(content_words(" ".join(_ADDRESS_HEADS) + " address addresses"))
    source_texts = [s for _, _, s in sources]
    return Part(text, tuple(question_anchors(text, source_texts)), want, focus, numbers, currency)


def asked_words(part: Part) -> set[str]:
    """The part's words that say what it is about: its content words without the question's verbs
    ("what does Figure 3 [show]"), the words saying what kind of value it wants, or its sources."""
    sources = {w for a in part.anchors if a.kind in ("source", "reference") for w in content_words(a.text)}
    unasked = set(content_words(" ".join(_VERBS))) | set(content_words(DOC_NOUN_WORDS))  # "the Kestrel [paper]"
    return set(content_words(part.text)) - KIND_WORDS - sources - unasked


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
