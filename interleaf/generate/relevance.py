"""Relevance beside support: does a sentence answer a part of the question? (Whether a whole answer
addresses the question, each part answered or said missing, is answer_verdict.py's, on these tests.)

The citation checker's `supported` says a quote backs a sentence; it cannot see that "A total of 3
trucks were used for 15 hours [1]" answers nothing about Norvane's stock price. Here a piece of
evidence (a sentence, a table row with its labels) answers a part of the question (asking.py) when
1. it holds every anchor the part requires: the name, code, number or quoted phrase, verbatim or
   in a form the documents write it ("CoT" for "Chain-of-Thought", "FAQ" inside "ArchivedFAQ"),
   in itself or in what it is read with (a row's column headers and caption, the sentence before);
2. it gives the kind of value the part wants: a number other than the question's own for "how
   many" or "what accuracy", an amount in the currency asked for ("how many dollars");
3. it is about what is asked: it shares a word of the phrase the wh-word asks about, or one of the
   part's names.
An anchor is not required where it names no particular passage or cannot be checked: one the
document's file name or title holds ("Kestrel" in kestrel-2021.pdf, "GX7" in "Access Rules and
Audit Trails in the GX7 Database"), and a Latin-script anchor read against text in another script
(a translation is not a miss).

No threshold here is fitted to a question set: each test is a yes/no about what the question names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from interleaf.evidence import fold
from interleaf.expand.instructions import told_years
from interleaf.generate.asking import CURRENCIES, Part, asked_words, question_parts, want_label, without_article
from interleaf.generate.months import MONTH_YEAR, dates_in
from interleaf.generate.number_words import asks_count, counts_in_words
from interleaf.generate.offline_units import FLOAT_KIND, FLOAT_NUMBER, LABEL, kind_of_label
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.question_anchors import Anchor
from interleaf.generate.sentences import MONTH_DATE, addresses_in, content_words, numbers_in
from interleaf.text.references import REFERENCE

# Below this share of Latin letters a text is in another script: a Latin anchor may be translated.
LATIN_SHARE = 0.5
# how much of a document's text its script is judged on
_SCRIPT_SAMPLE = 20_000

_TOKEN = re.compile(r"[^\W_]+")
# An identifier or acronym written in capitals ("LEVEL", "BUILD_LEVEL", "RSI", "BM25"): the
# documents write it so, and a word in lower case is another thing
_IDENTIFIER = re.compile(r"(?=[A-Z0-9_]*[A-Z][A-Z0-9_]*[A-Z])[A-Z][A-Z0-9_]*")


@dataclass(frozen=True)
class Evidence:
    """A candidate answer: the text that states it and the text it is read with."""

    text: str  # the sentence or table row itself: the value must be here
    context: str = ""  # caption, column headers, group label, the sentence before
    doc_id: str = ""
    doc_name: str = ""
    doc_title: str = ""
    own: str = ""  # where a number the part names must be (a row and its caption); "": in `text` itself


@dataclass(frozen=True)
class Finding:
    ok: bool
    why: str = ""  # why not: "no quote mentions Norvane", "it gives no number"
    missing: tuple[str, ...] = ()  # required anchors it does not hold


def _norm(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def tokens(text: str) -> list[str]:
    return [_norm(t) for t in _TOKEN.findall(text.casefold())]


def _acronym(anchor: str) -> str | None:
    """ "Chain-of-Thought" -> "cot", "Harbor Surveys" -> "hs": the initials of a name of words."""
    words = re.findall(r"[^\W\d_]+", anchor)
    if len(words) < 2 or any(w.isupper() and len(w) > 1 for w in words):
        return None
    return "".join(w[0] for w in words).casefold()


def _forms(anchor: Anchor) -> list[list[str]]:
    """The token sequences that count as the anchor written in a text."""
    out = [tokens(anchor.text)]
    acronym = _acronym(anchor.text)
    if acronym:
        out.append([acronym])
    if re.fullmatch(r"[A-Za-z]+", anchor.text):  # "ArchivedFAQ": its acronym part is how tables write it
        out += [[p.casefold()] for p in re.findall(r"[A-Z]{2,}(?![a-z])", anchor.text) if p != anchor.text]
    return [f for f in out if f]


def _has_sequence(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


class _Read:
    """A document's whole text, read once for `prints`: its numbers, its words and the tables and
    figures it labels."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.numbers = set(numbers_in(text))
        self.words = set(tokens(text))
        self.floats = {
            (kind_of_label(m.group(1)), number.casefold())
            for m in _PRINTED_FLOAT.finditer(text)
            for number in _FLOAT_NUMBER.findall(m.group(2))
        }

    def prints(self, anchor: Anchor) -> bool:
        """The text prints the anchor somewhere: a number or a time as a number; a name, each of its
        words anywhere, in any order (the document may word "the board-appointed Chief Safety
        Officer" as "the board appointed a Chief Safety Officer"), or run together ("U.K."
        as "UK"). Looser than `holds`: a name missing on these terms is missing from the document."""
        if anchor.kind in ("number", "time") and numbers_in(anchor.text):
            return set(numbers_in(anchor.text)) <= self.numbers
        if _is_float_label(anchor):  # "Figure 7": the document labels a figure 7 (a range: its first)
            number = _FLOAT_NUMBER.findall(anchor.text)[0].casefold()
            kind = kind_of_label(anchor.text)
            return (kind, number) in self.floats or (kind, re.split(r"[-–]", number)[0]) in self.floats
        words = tokens(anchor.text)
        return all(w in self.words for w in words) or "".join(words) in self.words


def _placing(part: Part) -> list[Anchor]:
    """What places the part: its required anchors, its times and the tables and figures it names."""
    return [a for a in part.anchors if a.required or a.kind == "time" or _is_float_label(a)]


def _is_float_label(anchor: Anchor) -> bool:
    return anchor.kind == "reference" and LABEL.fullmatch(anchor.text) is not None


# a label as documents print it: "Table 2", "Fig. 5-12", "FIG.2.", "Figs. 1, 2, 3, and 4"
_FLOAT_NUMBER = re.compile(rf"\b{FLOAT_NUMBER}\b", re.I)
_PRINTED_FLOAT = re.compile(
    rf"\b({FLOAT_KIND})s?\.?\s*({FLOAT_NUMBER}(?:\s*(?:,|&|and|,\s*and)\s*{FLOAT_NUMBER})*)\b", re.I
)


@lru_cache(maxsize=8)
def _read(text: str) -> _Read:
    """A document's text read once for the questions asked about it (they come one after another)."""
    return _Read(text)


class PrintedLabels:
    """The labels a text prints: its table cells and its short lines, folded."""

    def __init__(self, text: str) -> None:
        self.labels = {" ".join(fold(c).split()) for c in _CELL.split(text) if 0 < len(c) <= _LABEL_CHARS}

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, str) and without_article(" ".join(fold(phrase).split())) in self.labels


_CELL = re.compile(r"\s*[|\n]\s*")
_LABEL_CHARS = 80  # a label is a cell or a line, not a paragraph


@lru_cache(maxsize=8)
def printed_labels(text: str) -> PrintedLabels:
    """A text's labels, read once for the questions asked of it (they come one after another)."""
    return PrintedLabels(text)


def holds(anchor: Anchor, text: str) -> bool:
    """The text writes the anchor (a number as a number: "8" is not in "8.4")."""
    if anchor.kind in ("number", "time") and numbers_in(anchor.text):
        return set(numbers_in(anchor.text)) <= set(numbers_in(text))
    if _IDENTIFIER.fullmatch(anchor.text):  # "LEVEL", the column, is not the word "level"
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(anchor.text)}(?![A-Za-z0-9_])", text) is not None or (
            len(anchor.text) <= 5 and _inside_caps(anchor.text, text)
        )
    have = tokens(text)
    acronym = _acronym(anchor.text)
    for form in _forms(anchor):
        if form == [acronym] and not re.search(rf"(?<![\w])(?=\w*[A-Z]\w*[A-Z])(?i:{re.escape(acronym)})(?!\w)", text):
            continue  # an acronym counts written as one ("CoT", "HS"), not as the word "cot"
        if _has_sequence(have, form):
            return True
    return False


def _inside_caps(acronym: str, text: str) -> bool:
    """ "QA" inside "XMQA", "FAQ" in "ArchivedFAQ": an acronym inside a longer one or a compound."""
    pattern = rf"(?<![A-Za-z_])[A-Z]*{acronym}[A-Z]*s?(?![a-z_])|[A-Z][a-z]+{acronym}(?![a-z_])"
    return re.search(pattern, text) is not None


def names_float(part: Part, evidence: Evidence) -> bool:
    """The evidence is the table or figure the part names, or speaks of it ("Fig. 3" is "Figure 3";
    "Table 5" is not "Table 50"); True when the part names none."""
    floats = [a.text for a in part.anchors if a.kind == "reference" and LABEL.fullmatch(a.text)]
    read = f"{evidence.text}\n{evidence.context}"
    return not floats or any(_names_float(f, read) for f in floats)


def names_another_float(part: Part, evidence: Evidence) -> bool:
    """The evidence speaks of another table or figure of the kind the part names, and not of the one
    it names ("In Table 4, we report ..." for "What does Table 2 compare?"): it is about that other."""
    floats = [a.text for a in part.anchors if a.kind == "reference" and LABEL.fullmatch(a.text)]
    if not floats or names_float(part, evidence):
        return False
    kinds = {kind_of_label(f) for f in floats}
    return any(kind_of_label(m.group(0)) in kinds for m in LABEL.finditer(evidence.text))


def _names_float(reference: str, text: str) -> bool:
    """The text names the table or figure ("Fig. 3" is "Figure 3"; "Table 5" is not "Table 50")."""
    wanted = (kind_of_label(reference), re.sub(r"\D+", " ", reference).split())
    return any(
        (kind_of_label(m.group(0)), re.sub(r"\D+", " ", m.group(0)).split()) == wanted for m in LABEL.finditer(text)
    )


def _names_document(anchor: Anchor, name: set[str], title: str) -> bool:
    """The anchor is the document's file name or title, or a name of several words one of which the
    file name holds ("Norvane Holdings" for norvane-overview.pdf, "A Guide to Home Composting"
    for composting-guide.pdf), or whose words the file name writes run together ("Norvane Holdings"
    for NORVANEHOLDINGS_2023.pdf)."""
    words = set(tokens(anchor.text))
    joined = "".join(tokens(anchor.text))
    return bool(words) and (
        words <= name or holds(anchor, title) or (len(words) > 1 and (bool(words & name) or joined in name))
    )


def _latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return not letters or sum(c.isascii() for c in letters) / len(letters) >= LATIN_SHARE


def name_tokens(doc_name: str) -> set[str]:
    return set(tokens(re.sub(r"\.pdf$", "", doc_name, flags=re.I))) - {"pdf"}


class Relevance:
    """The question's parts, read against one context (which anchors no quote holds at all) and,
    when given, the whole text of the documents asked about (which anchors they never print)."""

    def __init__(self, question: str, quotes: Sequence[ContextQuote], documents_text: str | None = None) -> None:
        self.question = question
        self.quotes = quotes
        texts = {q.quote_id: quote_text(q) for q in quotes}
        labelled = documents_text if documents_text is not None else "\n".join(q.text for q in quotes)
        self.parts = question_parts(question, printed_labels(labelled).__contains__)
        anchors = {a for p in self.parts for a in p.required}
        self.held_anywhere = {a: any(holds(a, t) for t in texts.values()) for a in anchors}
        # a document in another script than Latin is not read for them: the question's names may be translated
        self.in_documents: dict[Anchor, bool] = {}
        self._months_unprinted: list[str] = []
        self._told_unprinted: list[str] = []
        if documents_text is not None and _latin(documents_text[:_SCRIPT_SAMPLE]):
            read = _read(documents_text)
            self.in_documents = {a: read.prints(a) for p in self.parts for a in _placing(p)}
            # a month of a year is printed as one date: the year alone, printed for another month, is not it
            named = (m for p in self.parts for m in MONTH_YEAR.finditer(p.text))
            self._months_unprinted = [m.group(0) for m in named if not dates_in(read.text, m.group(1), m.group(2))]
            # the years an instruction gives date the whole question (its parts are read without it)
            told = dict.fromkeys(told_years(question))
            self._told_unprinted = [y for y in told if not read.prints(Anchor(y, "time"))]
        pages: dict[tuple[str, int], list[str]] = {}
        for q in quotes:
            pages.setdefault((q.doc_id, q.page_idx), []).append(texts[q.quote_id])
        self._page_texts = {page: "\n".join(held) for page, held in pages.items()}
        # off_page by (part, page): every candidate of a page asks the same
        self._off_page: dict[tuple[Part, tuple[str, int]], tuple[float, float]] = {}

    def off_page(self, part: Part, quote: ContextQuote) -> tuple[float, float]:
        """The shares of the part's required anchors, and of its times ("2026", "June 2019"), that no
        quote of the context printed on `quote`'s page holds: an answer is read where what the
        question names is printed, and a question about another year or entity than the page's is
        often one the document does not answer."""
        key = (part, (quote.doc_id, quote.page_idx))
        if key not in self._off_page:
            page = self._page_texts.get(key[1], "")
            required = part.required
            times = [a for a in part.anchors if a.kind == "time"]
            off = sum(not holds(a, page) for a in required) / len(required) if required else 0.0
            off_time = sum(not holds(a, page) for a in times) / len(times) if times else 0.0
            self._off_page[key] = (off, off_time)
        return self._off_page[key]

    def check(self, part: Part, evidence: Evidence) -> Finding:
        read = f"{evidence.text}\n{evidence.context}"
        latin = _latin(evidence.text)
        named = name_tokens(evidence.doc_name)
        missing, held_names = [], []
        for a in part.required:
            of_document = a.kind != "number" and _names_document(a, named, evidence.doc_title)
            if holds(a, (evidence.own or evidence.text) if a.kind == "number" else read):
                # a name tells what the evidence is about, unless it names the document itself
                held_names += [a] if a.kind != "number" and not of_document else []
            elif of_document:
                continue  # it names the document the evidence is from
            elif latin or not _latin(a.text):
                missing.append(a.text)
        if missing:
            return Finding(False, f"it does not mention {_join(missing)}", tuple(missing))
        if part.want != "text" and not gives_value(part, evidence.text):
            return Finding(False, f"it gives no {want_label(part).removeprefix('a ').removeprefix('an ')}")
        if not held_names and latin and not _is_about(part, evidence, read):
            return Finding(False, "it is about something else")
        return Finding(True)

    def absent(self, part: Part) -> list[str]:
        """The part's required anchors that no quote of the context holds."""
        return [a.text for a in part.required if not self.held_anywhere.get(a, True)]

    def never_printed(self, part: Part) -> list[str]:
        """The part's required anchors and its years and dates that the documents asked about never
        print, and the months of a year it names that they date nothing in (none when their text is
        not known: corpus scope), and the years its instructions give. A question about 2022 put to a
        report on 2018, or about a product the manual does not cover, is not answered by it."""
        months = [m for m in self._months_unprinted if m in part.text]
        missing = [a.text for a in _placing(part) if not self.in_documents.get(a, True)]
        missing = [t for t in missing if not any(t in m for m in months)] + months
        return missing + [y for y in self._told_unprinted if y not in missing]

    def reason(self, part: Part, findings: Sequence[Finding]) -> str:
        """Why no evidence answers the part, for `abstain_reason` and the abstention sentence."""
        never = self.never_printed(part)
        if never:
            return f"no page of the document mentions {_join(never)}"
        absent = self.absent(part)
        if absent:
            return f"no quote mentions {_join(absent)}"
        anchored = [f for f in findings if not f.missing]
        if anchored and part.want != "text":
            return f"the quotes that mention it give no {want_label(part).split(' ', 1)[1]}"
        if findings:
            fewest = min(findings, key=lambda f: len(f.missing))
            if fewest.missing:
                return f"no quote mentions {_join(fewest.missing)} in the same place"
        return "no quote answers it"


def _is_about(part: Part, evidence: Evidence, read: str) -> bool:
    """The evidence is about what the part asks: it holds the phrase the wh-word asks about ("the
    [retention rate]"); a part with no such phrase ("how long did annotators spend?"), one of its
    words (`asked_words`: not its verbs, nor a word saying what kind of value is asked)."""
    if part.focus:
        return part.focus <= set(content_words(evidence.own or evidence.text))
    words = asked_words(part)
    return not words or bool(words & set(content_words(read)))


def _join(items: Sequence[str]) -> str:
    items = list(dict.fromkeys(items))
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quote_text(q: ContextQuote) -> str:
    return "\n".join(t for t in (q.text, q.caption, q.vlm_text) if t)


# "640K", "3.7M", "7.9 billion": a number with its magnitude
_MAGNITUDE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?(?:[KMBkm]|bn|thousand|million|billion|trillion)\b")
# "(Smith et al. 2021)", "(Okafor et al. 2023b)": a reference's year is no value
_CITED_YEAR = re.compile(r"\((?:[^()]*?\s)?(?:1[89]|20)\d\d[a-z]?\)")
# a code: letters with digits ("K42.7", "CHAR(12)"), a system value ("*PERMIT"), an identifier ("SESSION_OWNER")
_CODE_VALUE = re.compile(
    r"(?<![\w*])(?=[\w.-]*[A-Za-z])(?=[\w.-]*\d)[A-Za-z0-9][\w.-]*|\*[A-Z]{3,}\b|\b[A-Z]+_[A-Z_]+\b"
)

# a date: a month's name, a year (not a number's end after a dash: "512-1800"), a date in figures. With
# boilerplate.py, one more answerable question right on the dev half
_DATE_VALUE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?<![\d–-])(?:1[5-9]|20)\d\d(?!\d)"
    r"|\b\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\b",
    re.I,
)


def gives_value(part: Part, text: str) -> bool:
    """A number the question did not state (a float label's or a reference's number is no value),
    for an amount of a named currency that currency, for a code a token of letters and digits, for
    a web or email address one."""
    if part.want == "address":
        return bool(addresses_in(text, part.text))
    bare = _CITED_YEAR.sub(" ", REFERENCE.sub(" ", text))
    if part.want == "code":
        asked = set(tokens(part.text))
        return any(set(tokens(m.group(0))) - asked for m in _CODE_VALUE.finditer(bare))
    if part.want in ("number", "money"):  # a date's day and year are no amount: "as of February 17, 2026"
        bare = MONTH_DATE.sub(" ", bare)
    values = [n for n in numbers_in(bare) + [m.group(1) for m in _MAGNITUDE.finditer(bare)] if n not in part.numbers]
    if part.want == "number" and asks_count(part.text):  # "how many harbours?" of "visited nine harbours"
        values += [n for n in counts_in_words(bare) if n not in part.numbers]
    if part.want == "date":
        values = [v for v in _DATE_VALUE.findall(bare) if v not in part.numbers]
    if not values:
        return False
    if part.want == "money" and part.currency:
        folded = bare.casefold()
        return any(
            (f in folded) if not f.isalpha() else bool(re.search(rf"\b{f}", folded)) for f in CURRENCIES[part.currency]
        )
    return True
