"""Sentences, numbers and content words: what the citation checker and the offline composer both
read answers and quotes as.

Answers are Markdown (MMDocRAG §3): a sentence ends at `.`/`!`/`?`, and headings, list items,
table rows and image lines are units of their own. Citations written after a full stop (`... 53.7. [2]`)
and an image placed right after a sentence (`... 53.7. ![Table 2](image1)`) belong to that sentence.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from interleaf.text.tokens import tokenize

# -- Markdown markup that carries citations ---------------------------------------------------------

IMAGE_MARK = re.compile(r"!\[([^\]]*)\]\(\s*image(\d+)\s*\)")
# `[3]`, `[1, 2]`, `[2–4]`; not a link's label (`[3](url)`)
TEXT_MARK = re.compile(r"\[\s*\d+(?:\s*(?:,|;|-|–|—|and)\s*\d+)*\s*\](?!\()")

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")

# A sentence ends at . ! ? (and any closing quote or bracket) followed by white space; a no-break
# space after a full stop ("Inf.\u00a0F1") says it ends no sentence, as typesetters use it.
_END = re.compile(r"[.!?]+[\"'”’)\]]*[^\S\u00a0]+")
# Words after which a full stop does not end the sentence.
_ABBREVIATIONS = frozenset(
    """
    e.g i.e et al fig figs tab eq eqs sec no nos vs etc dr mr mrs ms prof st approx cf ca resp incl ref
    refs vol pp p ch app jan feb mar apr jun jul aug sep sept oct nov dec inc ltd co corp dept est
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
_LABEL_ONLY = re.compile(r"^(?:Table|Figure|Fig|Chart|Example)\.?\s*[0-9IVX]+(?:[.\-–][0-9]+)*$", re.I)
_INITIALS = re.compile(r"^(?:[A-Za-z]\.){1,}[A-Za-z]?$")  # "U.S", "J", "e.g"
_ONLY_MARKS = re.compile(rf"^(?:\s*(?:{IMAGE_MARK.pattern}|{TEXT_MARK.pattern}))+\s*[.,;:]?\s*$")
_LEADING_MARKS = re.compile(rf"^(?:\s*(?:{IMAGE_MARK.pattern}|{TEXT_MARK.pattern}))+[.,;:]?")


def split_prose(text: str) -> list[str]:
    """Sentences of running text (one paragraph, line breaks already folded or not)."""
    text = re.sub(r"[^\S\u00a0]+", " ", text).strip()
    if not text:
        return []
    # an image's alt text is no place to end a sentence: set the marks aside while splitting
    marks = [m.group(0) for m in IMAGE_MARK.finditer(text)]
    text = IMAGE_MARK.sub(lambda m: f"\ue000{marks.index(m.group(0))}\ue001", text)
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        before = text[start : m.start()].rsplit(" ", 1)[-1]
        after = text[m.end() : m.end() + 1]
        word = re.split(r"[-–/(]", before.rstrip(".").casefold())[-1]  # "June 29-Jul.": the word is "jul"
        single_stop = m.group(0).startswith(".") and len(m.group(0).rstrip()) == 1
        if single_stop and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or _INITIALS.match(word)):
            continue
        if single_stop and _LABEL_ONLY.match(text[start : m.start()].strip()):
            continue  # "Figure 1. Four Cornerstones ...": a caption's label, not a sentence
        if after and after.islower():  # "... approx. five" or an OCR'd line that only looks ended
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    if text[start:].strip():
        out.append(text[start:].strip())
    if marks:
        out = [re.sub("\ue000(\\d+)\ue001", lambda m: marks[int(m.group(1))], s) for s in out]
    return _attach_marks(out)


def keep_together(text: str) -> str:
    """The text with no sentence end inside it: each full stop followed by a no-break space."""
    return re.sub(r"([.!?][\"'”’)\]]*)[^\S\u00a0]+(?=\S)", "\\1\u00a0", text)


def _attach_marks(sentences: list[str]) -> list[str]:
    """`... 53.7. [2] Next` and `... 53.7. ![..](image1)`: the marks belong to the sentence before."""
    out: list[str] = []
    for s in sentences:
        if out and _ONLY_MARKS.match(s):
            out[-1] = f"{out[-1]} {s}"
            continue
        lead = _LEADING_MARKS.match(s) if out else None
        if lead:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            s = s[lead.end() :].strip()
            if not s:
                continue
        out.append(s)
    return out


def split_sentences(markdown: str) -> list[str]:
    """The answer's sentences in order, as shown (citations kept): prose split into sentences;
    headings, list items, table rows, image lines and fenced blocks each one unit; table rules and
    blank lines dropped."""
    units: list[str] = []
    paragraph: list[str] = []
    fence: list[str] | None = None

    def flush() -> None:
        if paragraph:
            units.extend(split_prose(" ".join(paragraph)))
            paragraph.clear()

    for line in markdown.splitlines():
        if fence is not None:
            fence.append(line)
            if _FENCE.match(line):
                units.append("\n".join(fence))
                fence = None
            continue
        if _FENCE.match(line):
            flush()
            fence = [line]
            continue
        stripped = line.strip()
        if not stripped or _TABLE_RULE.match(line):
            flush()
            continue
        if _HEADING.match(line) or _TABLE_ROW.match(line):
            flush()
            units.append(stripped)
        elif _ONLY_MARKS.match(stripped) and IMAGE_MARK.search(stripped):
            flush()  # an image line: a unit of its own
            units.append(stripped)
        elif _LIST_ITEM.match(line):
            flush()
            paragraph.append(stripped)  # an item is a paragraph of its own
            flush()
        else:
            paragraph.append(stripped)
    flush()
    if fence is not None:
        units.append("\n".join(fence))
    return units


def strip_marks(text: str, keep_alt: bool = False) -> str:
    """The claim a sentence makes: citations and image marks removed (an image's alt text kept when
    asked: an image line's claim is its alt text), Markdown list/heading/table syntax folded."""
    text = IMAGE_MARK.sub(lambda m: f" {m.group(1)} " if keep_alt else " ", text)
    text = TEXT_MARK.sub(" ", text)
    text = re.sub(r"^\s*(?:#{1,6}|[-*+]|\d{1,3}[.)])\s+", "", text)
    text = text.replace("|", " ; ")
    text = re.sub(r"[*_`]{1,3}", "", text)
    return re.sub(r"\s+", " ", text).strip(" ;")


# -- numbers ---------------------------------------------------------------------------------------

# A number stands alone: not glued to a word before it ("Qwen3", "GPT-4o" keep theirs) nor followed
# by letters ("8B"), except ordinals ("29th"). Thousands separators: "1,234", "34,107,256" and the
# Indian "4,71,306"; the last group has three digits, so a list "1,2,3" stays three numbers.
_NUMBER = re.compile(
    r"(?<![\w.])(?<![A-Za-z]-)"
    r"(\d{1,3}(?:,\d{3})+(?!\d)(?!,\d)|\d{1,2}(?:,\d{2})+,\d{3}(?!\d)(?!,\d)|\d+)(\.\d+)?"
    r"(?:\s?%|(?:st|nd|rd|th)\b)?(?![\w])(?!\.\d)"
)
# `[2]`, `[1, 3]`, a reference escaped as `\[18\]`, `(image2)`, and an enumerator `(1)`, `(ii)`
_CITATION_LIKE = re.compile(
    r"\\?\[\s*\d+(?:\s*(?:,|;|-|–|—|and)\s*\d+)*\s*\\?\]|\(\s*image\s*\d+\s*\)|(?<!\w)\((?:\d{1,2}|[ivx]{1,4})\)", re.I
)


def normalise_number(whole: str, fraction: str | None) -> str:
    """ "1,234" -> "1234", "53.70" -> "53.7", "1.0" -> "1", "007" -> "7"."""
    digits = whole.replace(",", "")
    value = f"{digits}{fraction or ''}"
    try:
        number = Decimal(value)
    except InvalidOperation:  # cannot happen for the pattern's digits; keep the text as written
        return value
    text = f"{number:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def numbers_in(text: str) -> list[str]:
    """The numbers a text states, normalised, in order, without repeats. Citation markers (`[2]`,
    `[1, 3]`, `(image2)`) and enumerators (`(1)`) are not numbers the text states; `%` and thousands
    separators are dropped."""
    text = _CITATION_LIKE.sub(" ", text)
    seen: dict[str, None] = {}
    for m in _NUMBER.finditer(text):
        seen.setdefault(normalise_number(m.group(1), m.group(2)), None)
    return list(seen)


# a date printed with its month's name: "November 9, 2004", "9 Nov. 2004", "February 17, 2026"
MONTH_DATE = re.compile(
    r"\b(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2},?)?\s+\d{4}\b", re.I
)


# a web or email address: "lindqvt@example.edu", "www.tidewater.org", "https://example.org/a", "coastalcare.org.au"
# (a bare domain: two labels or more, the last of small letters: "e.g." and "U.S." have one-letter
# labels, and "results.We" is a sentence the text layer ran on)
WEB_ADDRESS = re.compile(
    r"(?<![\w@.-])(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s<>()\[\]]+|www\.[\w-]+(?:\.[\w-]+)+(?:/[^\s<>()\[\]]*)?"
    r"|[a-z0-9][\w-]+(?:\.[\w-]{2,})*\.(?-i:[a-z]{2,24})(?:/[^\s<>()\[\]]*)?)(?<![.,;:])(?![\w@-])",
    re.I,
)


def address_matches(text: str, question: str) -> list[re.Match[str]]:
    """Where `text` prints web or email addresses of the kind the question asks (an email address
    where it names one, else a web one), but those it gives itself."""
    email = re.search(r"\be-?mail", question, re.I) is not None
    asked = question.casefold()
    found = WEB_ADDRESS.finditer(text)
    return [m for m in found if ("@" in m.group(0)) == email and m.group(0).casefold() not in asked]


def addresses_in(text: str, question: str) -> list[str]:
    """The addresses `address_matches` finds, as printed."""
    return [m.group(0) for m in address_matches(text, question)]


def quantities_in(text: str) -> list[str]:
    """`numbers_in`, without the numbers of its dates: "as of February 17, 2026" states no quantity."""
    return numbers_in(MONTH_DATE.sub(" ", text))


# -- content words ---------------------------------------------------------------------------------

# Function words the tokenizer's stopword list keeps (it is tuned for retrieval, where they are
# rare in queries); in answer sentences they are frequent and carry no claim.
_FUNCTION_WORDS = frozenset(
    """
    also can could may might must shall should will would nor but if so such we our us you your he she
    his her they them i me my one ones both each all any some other another been being am had having
    here where when why while whereas however therefore thus hence since because although though only
    just even still yet over under between among per via within without up down out off again further
    once same own too s t
    """.split()  # noqa: SIM905 (a word list reads best as words)
)


def content_words(text: str) -> list[str]:
    """Stemmed words that carry content: no stopwords, no numbers (they are checked on their own),
    no citation markers."""
    text = _CITATION_LIKE.sub(" ", strip_marks(text, keep_alt=True))
    return [_stem(w) for w in tokenize(text) if w not in _FUNCTION_WORDS and not w[0].isdigit() and len(w) > 1]


# The same Snowball stemmer as BM25's stemmed view (interleaf.index.bm25), without importing the
# index package into this pure module.
@functools.lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


@functools.cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


# -- quote text as candidate sentences ------------------------------------------------------------------

# A word broken at a line end ("em-\nploy", or "sched- uling" once lines were folded); not the
# suspended hyphen of "pre- and post-".
_BROKEN_WORD = re.compile(r"(?<=[a-z])-\s*\n\s*(?=[a-z])|(?<=[a-z])- (?!(?:and|or|to|und|et|ou)\b)(?=[a-z])")
EMPTY_CELLS = frozenset({"", "-", "–", "—"})  # a cell printing nothing, or a dash for nothing


def dehyphenate(text: str) -> str:
    return _BROKEN_WORD.sub("", text)


@dataclass(frozen=True)
class TableRow:
    cells: tuple[str, ...]  # the row as the table has it
    header: tuple[str, ...]  # per column: the header rows' cells joined ("" where none)
    group: str = ""  # the group label row above it ("Vireo-7B" over "+ Plain", "+ Retrieval")

    def as_text(self) -> str:
        """`Dataset: CityQuests; Test: 8,204`: each filled cell with its column's header."""
        parts = []
        for i, cell in enumerate(self.cells):
            if cell in EMPTY_CELLS:
                continue
            if not parts and self.group:
                cell = f"{self.group} {cell}"
            head = self.header[i] if i < len(self.header) else ""
            parts.append(f"{head}: {cell}" if head and head != cell else cell)
        return "; ".join(parts)

    def value(self, column: int) -> float | None:
        """The number a cell states first (`79,168 58,880` -> 79168), None for a cell with none; a
        length of time in days, so that a column printing "7 months" and "17 weeks" compares them."""
        found = numbers_in(self.cells[column]) if column < len(self.cells) else []
        if not found:
            return None
        duration = _DURATION.fullmatch(self.cells[column].strip())
        return float(found[0]) * _DAYS[duration.group(1).casefold()] if duration else float(found[0])


# a length of time as a cell prints it ("7 months", "2 weeks", "1.5 yrs") and each unit's days
_DAYS = {"year": 365.25, "yr": 365.25, "month": 30.44, "mo": 30.44, "week": 7.0, "wk": 7.0, "day": 1.0}
_DURATION = re.compile(rf"\d+(?:\.\d+)?\s*({'|'.join(_DAYS)})s?\.?", re.I)

_CELL_SPLIT = re.compile(r"(?<!\\)\|")  # a cell may hold an escaped `\|`


def _clean_cell(cell: str) -> str:
    """A cell as read: no bold markers, a line break inside it (`<br>`) as a slash."""
    return re.sub(r"\s*<br\s*/?>\s*", " / ", cell.replace("**", "")).strip()


def _looks_like_data(row: list[str]) -> bool:
    """Header cells hold names and, at most, whole numbers (years, "Top-20") or a measure their
    words name ("90% interval bound"); data holds measurements, with a unit word at most
    ("+/- 2.1% points")."""
    return any(re.search(r"\d[.,]\d|\d\s?%", c) and len(re.findall(r"[^\W\d_]{2,}", c)) <= 1 for c in row)


def table_rows(text: str) -> list[TableRow]:
    """The data rows of the first Markdown table in a text (a table quote's OCR or VLM text).
    Header rows are the leading rows with no number in them (several make a multi-level header)."""
    rows: list[list[str]] = []
    n_head = 0
    for line in (line.strip() for line in text.splitlines()):
        if _TABLE_RULE.match(line) and rows:
            n_head = n_head or len(rows)  # Markdown: the rows above the rule are the header
            continue
        if _TABLE_ROW.match(line):
            rows.append([_clean_cell(c) for c in _CELL_SPLIT.split(line.strip()[1:-1])])
        elif rows:
            break
    if any(_looks_like_data(r) for r in rows[:n_head]):
        n_head = 0  # a table parsed without its header: the rule sits under the first data row
    width = max((len(r) for r in rows), default=0)
    if width < 2:  # one column: every row is the text itself
        return _single_column(rows)
    # A parsed multi-level header spills below the rule: rows with no number and two or more
    # filled cells ("| | | Text | Image |"); a row with one filled cell is a group label ("| Single | | |").
    # A table of text (no row states a number) has no spilled header: its rows are all data.
    numeric = any(numbers_in(c) for r in rows[n_head:] for c in r)
    while numeric and n_head < len(rows) - 1 and not any(numbers_in(c) for c in rows[n_head]):
        if sum(c not in EMPTY_CELLS for c in rows[n_head]) < 2:
            break
        n_head += 1
    header = tuple(
        " ".join(r[i] for r in rows[:n_head] if i < len(r) and r[i] not in EMPTY_CELLS).strip() for i in range(width)
    )
    out: list[TableRow] = []
    group = ""
    for r in rows[n_head:]:
        filled = [i for i, c in enumerate(r) if c not in EMPTY_CELLS]
        if filled == [0] and out and _wrapped(out[-1].cells[0], r[0]):
            first = out[-1]  # the label goes on under its row
            out[-1] = replace(first, cells=(f"{first.cells[0]} {r[0]}", *first.cells[1:]))
            continue
        if width >= 3 and filled == [0]:
            group = r[0]  # a group label row: its label goes with the rows under it
            continue
        if filled:
            out.append(TableRow(tuple(r), header, group))
    return with_column_units(out)


# a label cut off where its cell wraps: it ends on a word that needs another after it, or on a colon,
# an ampersand, a comma or a dash
_OPEN_END = re.compile(r"(?:\b(?:a|an|and|as|at|by|for|from|in|into|of|on|or|the|to|with)|[:&,\-–])\s*$", re.I)


def _wrapped(label: str, line: str) -> bool:
    """A row holding only a label (`line`) is the rest of the label above it, wrapped onto a
    second line of its cell, where that one is cut off ("Vireo grants for" over "Coastal Towns") or
    this one goes on in small letters ("Kestrel counts in" over "spring and autumn"); else it is a
    row of its own, or the label of the rows under it. Worth on the MMLongBench-Doc dev half, with
    the lengths of time `TableRow.value` compares: one answerable question more right (of 234); the
    corpus dev sets' figures do not move."""
    return bool(label) and (_OPEN_END.search(label) is not None or line[:1].islower())


_BARE = re.compile(r"[+\-–−]?\d(?:[\d,]*\d)?(?:\.\d+)?")


def with_column_units(rows: list[TableRow]) -> list[TableRow]:
    """A chart or a table may print a column's percent sign once, on its first value ("East 27% 39%"
    over "West 14 48"): the bare numbers below it are percents too, and say so. A column that prints
    the sign on some values but not its first, or holds anything but bare numbers below, is left
    as read."""
    if not rows:
        return rows
    width = max(len(r.cells) for r in rows)
    percent: set[int] = set()
    for j in range(1, width):
        cells = [r.cells[j] for r in rows if j < len(r.cells) and r.cells[j]]
        if len(cells) > 1 and re.fullmatch(rf"{_BARE.pattern}%", cells[0]) and all(map(_BARE.fullmatch, cells[1:])):
            percent.add(j)
    if not percent:
        return rows
    return [
        replace(r, cells=tuple(f"{c}%" if j in percent and _BARE.fullmatch(c) else c for j, c in enumerate(r.cells)))
        for r in rows
    ]


_GROUP_WORDS = 4  # a group label names ("Vireo-Embed", "Trained on MixSet"); a longer line is a row


def _single_column(rows: list[list[str]]) -> list[TableRow]:
    """A table read as one column (its cells run together): where some rows state numbers, a short
    row with none is the label of the rows under it ("Vireo-Embed" over "+ pooled query vector
    0.5812")."""
    filled = [r for r in rows if any(c not in EMPTY_CELLS for c in r)]
    if not any(numbers_in(r[0]) for r in filled):
        return [TableRow(tuple(r), ()) for r in filled]
    out: list[TableRow] = []
    group = ""
    for r in filled:
        if numbers_in(r[0]) or len(r[0].split()) > _GROUP_WORDS:
            out.append(TableRow(tuple(r), (), group))
        else:
            group = r[0]
    return out
