"""The short answer beside the long one: the value, name or list a question asks for, or "Not
answerable" (`answers.short_answer`, what MMLongBench-Doc scores, interleaf/evaluate/mmlongbench.py).

A model writes it as the last line of its answer (prompts/answer_text.md, item 5): `Short answer: …`.
That line is taken off the Markdown shown and stored apart; an answer without it has none (the
benchmark's extraction prompt can then read it from the long answer, when a judge is configured).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from interleaf.expand.instructions import wants_quantity
from interleaf.generate.asking import Part
from interleaf.generate.differences import Difference
from interleaf.generate.months import DAY_SPAN
from interleaf.generate.number_words import asks_count, counts_in_words
from interleaf.generate.offline_scoring import WHICH_EXTREME, compared_group, superlative
from interleaf.generate.offline_units import LABEL, Unit
from interleaf.generate.respectively import value_in_order
from interleaf.generate.sentences import MONTH_DATE, address_matches, content_words, numbers_in
from interleaf.generate.table_cells import asked_columns, label_columns, row_label, without_remark
from interleaf.generate.titled import title_in
from interleaf.generate.totals import Total
from interleaf.text.references import REFERENCE

NOT_ANSWERABLE = "Not answerable"
# the last line that starts "Short answer:" (bold or not, any case); what follows it on that line
_LINE = re.compile(r"^[ \t>*_]*short[ \t]+answer[ \t*_]*:[ \t*_]*(?P<value>[^\n]*?)[ \t*_]*$", re.I | re.M)


def split_short_answer(markdown: str) -> tuple[str, str | None]:
    """(the answer without its `Short answer:` line, the value on that line); (markdown, None)
    when no such line is there. An empty value counts as none."""
    found = list(_LINE.finditer(markdown))
    if not found:
        return markdown, None
    last = found[-1]
    body = (markdown[: last.start()] + markdown[last.end() :]).strip()
    value = last.group("value").strip().strip("`").strip()
    return body, value or None


def abstained_short(answerable: bool, short: str | None) -> str | None:
    """An abstaining answer's short answer is "Not answerable", whatever the line said."""
    return short if answerable else NOT_ANSWERABLE


# -- the offline composer's short answer ------------------------------------------------------------

# What a short answer drops around the words it keeps: function words a span may start or end with.
_EDGE_WORDS = frozenset(
    """
    a an the of in on at to for by from with and or is are was were be been as that which who this these those
    it its their there than
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
_TOKEN = re.compile(r"[^\s]+")
_MAX_SPAN = 10  # a name or phrase answer, at most this many words; a longer span is no short answer


class _Chosen(Protocol):
    unit: Unit


class _Answered(Protocol):
    part: Part
    chosen: _Chosen | None
    worked_out: Difference | Total | None  # the difference or sum the answer works out, when the part asks one


def offline_short_answer(question: str, answers: Sequence[_Answered], units: Sequence[Unit]) -> str:
    """The value each answered part asks for, taken from the candidate that answers it: a number
    for a quantity (the asked column's cell of a row, else the sentence's number nearest the
    question's words), a year or date for "when", else the row's label or the sentence's longest
    run of words the question does not have. Several parts: a list. None answered: "Not answerable"."""
    values = [
        value
        for a in answers
        if a.chosen is not None
        and (value := a.worked_out.value if a.worked_out else _value_of(a.part, a.chosen.unit, units, question))
    ]
    values = list(dict.fromkeys(in_asked_form(question, v) for v in values))
    if not values:
        return NOT_ANSWERABLE if not any(a.chosen for a in answers) else _plain(answers)
    return values[0] if len(values) == 1 else repr(values)


# "Format the date as YYYY-MM-DD": the form a question asks a date in, and strftime's spelling of it
_DATE_FORMS = {"yyyy-mm-dd": "%Y-%m-%d", "yyyy-mm": "%Y-%m", "dd/mm/yyyy": "%d/%m/%Y", "mm/dd/yyyy": "%m/%d/%Y"}
_ASKED_FORM = re.compile(r"(?<![\w/-])(" + "|".join(map(re.escape, _DATE_FORMS)) + r")(?![\w/-])", re.I)
# "what percentage ...", "how many percent ...", "... in percentage": the value asked is a percentage
_ASKS_PERCENT = re.compile(
    r"\b(?:what|which)\s+(?:is\s+the\s+|are\s+the\s+)?percent(?:age)?s?\b|\bhow\s+many\s+(?:percent(?:age)?s?\b|%)"
    r"|\bin\s+percent(?:age)?\b",
    re.I,
)
_BARE_NUMBER = re.compile(r"\d+(?:\.\d+)?")  # a number with no unit
# how documents print a date: "November 9, 2004", "9 November 2004", "Nov. 9, 2004", "2004-11-09", "November 2004"
_PRINTED_DATE_FORMS = ("%B %d %Y", "%d %B %Y", "%b %d %Y", "%d %b %Y", "%Y-%m-%d", "%B %Y", "%b %Y")


def in_asked_form(question: str, value: str) -> str:
    """The value as the question asks a date written ("Format the date as YYYY-MM-DD": "November 9,
    2004" is "2004-11-09"); unchanged where the question asks no such form or the value is no date."""
    asked = _ASKED_FORM.search(question)
    if asked is None:
        return value
    bare = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b|\bof\b|[.,]", " ", value)
    bare = " ".join(bare.split())
    wanted = _DATE_FORMS[asked.group(1).casefold()]
    for form in _PRINTED_DATE_FORMS:
        if "%d" in wanted and "%d" not in form:
            continue  # "April 2015" has no day to write
        try:
            return datetime.strptime(bare, form).strftime(wanted)
        except ValueError:
            continue
    return value


def asked_form_sentence(question: str, short_answer: str, markdown: str) -> str:
    """The sentence that gives a date in the form the question asks it ("Format the date as
    YYYY-MM": "In the form asked: 2011-03."), for an answer that states it only as printed ("March
    2011"); "" where the question asks no form, the short answer is no date in it, or the answer
    already writes it so."""
    asked = _ASKED_FORM.search(question)
    if asked is None or short_answer in markdown:
        return ""
    try:
        datetime.strptime(short_answer, _DATE_FORMS[asked.group(1).casefold()])
    except ValueError:
        return ""
    return f"In the form asked: {short_answer}."


def percent_sentence(question: str, short_answer: str, markdown: str) -> str:
    """ "In the form asked: 65%." for a question asking a percentage ("what percentage ...") whose
    short answer is a number of 0 to 100 with no unit, read by the caller from a table's or a chart's
    cell (a chart prints its bars' shares bare, under a title or axis that says "%"); "" otherwise,
    or where the answer already writes it so. The short answer keeps its value: the benchmark reads
    a percent sign off a float, not off an integer. Worth, on the dev half: one more answerable
    question with the gold value in the answer; none fewer."""
    if not _ASKS_PERCENT.search(question) or not _BARE_NUMBER.fullmatch(short_answer):
        return ""
    percent = f"{short_answer}%"
    return "" if float(short_answer) > 100 or percent in markdown else f"In the form asked: {percent}."


def count_sentence(question: str, short_answer: str, markdown: str) -> str:
    """ "In figures: 9." for a question asking how many whose answer spells the count out ("visited nine
    harbours"; number_words.py), the short answer that count; "" otherwise, or where the answer
    already writes the figure."""
    if not asks_count(question) or short_answer not in counts_in_words(markdown):
        return ""
    return "" if re.search(rf"(?<![\d.,]){short_answer}(?![\d]|[.,]\d)", markdown) else f"In figures: {short_answer}."


def _within_group(label: str, group: str) -> str:
    """A row label compared among the rows its group name picks, as the question asks it: "which
    setting gives Kestrel the highest recall?" over "Kestrel (fast)", "Kestrel (slow)" asks for the
    setting, "slow", not the row's whole label; any other label whole. (On the dev half: one short
    answer more right by the strict rules.)"""
    m = re.fullmatch(rf"{re.escape(group)}\s*\((?P<inner>[^()]+)\)", label.strip(), re.I) if group else None
    return m.group("inner").strip() if m else label


def _plain(answers: Sequence[_Answered]) -> str:
    chosen = next(a.chosen for a in answers if a.chosen is not None)
    return " ".join(chosen.unit.text.split()[:_MAX_SPAN])


def _value_of(part: Part, unit: Unit, units: Sequence[Unit], question: str) -> str | None:
    text = part.text or question
    if unit.row is not None and part.want != "date" and WHICH_EXTREME.search(text) and superlative(text):
        # "which setting gives Kestrel the highest recall?": the row is the answer, its
        # number only what it was chosen by (a year asked is read as a date, below)
        table = [u.row for u in units if u.quote is unit.quote and u.row is not None]
        label = row_label(unit.row, label_columns(table))
        if label:
            return _within_group(label, compared_group(text, [u for u in units if u.quote is unit.quote]))
    if part.want in ("number", "money") or wants_quantity(text):
        return _number_of(part, unit, units)
    if part.want == "address":
        return _nearest_address(unit.text, text, [a.text for a in part.required])
    if part.want == "date":
        dates = [m.group(0) for m in _DATE.finditer(unit.text) if m.group(0) not in text]
        return dates[0] if dates else _number_of(part, unit, units)
    if unit.row is not None:
        rows = [u.row for u in units if u.quote is unit.quote and u.row is not None]
        labels = label_columns(rows)
        label = " ".join(unit.row.cells[j] for j in labels if j < len(unit.row.cells)).strip()
        if label and not set(content_words(without_remark(label))) <= set(content_words(text)):
            return label  # the row the question does not name is what it asks for ("which ... highest")
        columns = asked_columns(rows, unit.row, part, labels)
        cells = [unit.row.cells[j] for j in columns if j < len(unit.row.cells)]
        return "; ".join(cells) or None
    return title_in(part, unit.text) or _new_words(unit.text, text)


# a span of days is one answer to "when": "June 29-Jul. 4, 2021", "March 7-12, 2019"
_DAYS = rf"\b{DAY_SPAN},?\s+\d{{4}}\b"
_DATE = re.compile(_DAYS + "|" + MONTH_DATE.pattern + r"|\b\d{4}-\d{2}-\d{2}\b|\b(?:1[5-9]|20)\d\d\b", re.I)


def _number_of(part: Part, unit: Unit, units: Sequence[Unit]) -> str | None:
    """The asked column's number of a row; else the number of the sentence nearest the words of
    the question it holds (its own numbers and a float's label are no answer)."""
    if unit.row is not None:
        rows = [u.row for u in units if u.quote is unit.quote and u.row is not None]
        for j in asked_columns(rows, unit.row, part, label_columns(rows)):
            found = (
                [n for n in numbers_in(unit.row.cells[j]) if n not in part.numbers] if j < len(unit.row.cells) else []
            )
            if found:
                return found[0]
    parallel = value_in_order(part.text, unit.text, part.numbers) or _value_of_year(part, unit.text)
    if parallel is not None:
        return parallel
    # a date's day and year are no amount ("as of February 17, 2026"): blanked, the positions kept
    undated = MONTH_DATE.sub(lambda m: " " * len(m.group(0)), unit.text)
    # a float's label is no amount either ("Figure 1. Five Pillars of ..."), as `gives_value` reads it
    undated = REFERENCE.sub(lambda m: " " * len(m.group(0)), undated)
    tokens = [(m.start(), m.group(0)) for m in _TOKEN.finditer(undated)]
    asked = set(content_words(part.text))
    where = [pos for pos, tok in tokens if set(content_words(tok)) & asked]
    best: tuple[float, str] | None = None
    for pos, tok in tokens:
        found = [n for n in numbers_in(tok) if n not in part.numbers]
        if not found or LABEL.fullmatch(tok):
            continue
        distance = min((abs(pos - w) for w in where), default=0)
        if best is None or distance < best[0]:
            best = (distance, found[0])
    if best is None and asks_count(part.text):  # "how many harbours?" of "visited nine harbours": 9
        spelled = [n for n in counts_in_words(undated) if n not in part.numbers]
        return spelled[0] if spelled else None
    return best[1] if best else None


def _nearest_address(text: str, question: str, names: list[str]) -> str | None:
    """Of the text's addresses of the kind asked, the one nearest a name the question requires
    (else a word of it): a list of "Coastal Care NT coastalcarent.org Coastal Care QLD
    coastalcare.org.au" gives QLD's for "Coastal Care QLD"."""
    # each address with every place it is printed: one printed twice is as near as its nearer place
    starts: dict[str, list[int]] = {}
    for m in address_matches(text, question):
        starts.setdefault(m.group(0), []).append(m.start())
    if len(starts) < 2:
        return next(iter(starts), None)
    folded = text.casefold()
    where = [m.end() for n in names for m in re.finditer(re.escape(n.casefold()), folded)]
    if not where:
        asked = set(content_words(question))
        where = [m.start() for m in _TOKEN.finditer(text) if set(content_words(m.group(0))) & asked]
    return min(starts, key=lambda a: min((abs(s - w) for s in starts[a] for w in where), default=0))


_YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d\d(?![\d.,]\d)")


def _value_of_year(part: Part, text: str) -> str | None:
    """Where a sentence gives one value for each of several years, in their order ("As of June
    30, 2025 and 2026, ... was $1.7 billion and $2.1 billion"), the value of the one year the
    question names; None where the sentence is not so written (fewer values than years)."""
    asked = set(_YEAR.findall(part.text))
    years = list(dict.fromkeys(_YEAR.findall(text)))
    if len(asked) != 1 or len(years) < 2 or not asked <= set(years):
        return None
    values = [n for n in numbers_in(_DATE.sub(" ", text)) if n not in part.numbers]
    if len(values) < len(years):
        return None
    return values[years.index(next(iter(asked)))]


def _new_words(sentence: str, question: str) -> str | None:
    """The longest run of the sentence's words that the question does not have (of at most
    `_MAX_SPAN` words), without the function words at its ends; a run that ends in a capitalised word
    goes on through the capitalised words after it, the rest of the name it starts: "... was founded
    at [the Lisbon Institute of Applied] Acoustics" gives "Lisbon Institute of Applied Acoustics"."""
    asked = set(content_words(question)) | {w.casefold() for w in question.split()}
    words = sentence.split()
    runs: list[list[str]] = [[]]
    name_tail = False  # the run's last words are asked ones that finish a name it started
    for i, w in enumerate(words):
        bare = w.strip(".,;:()[]\"'“”‘’")
        stems = set(content_words(bare))
        if bare.casefold() in asked or (stems and all(any(_near(s, a) for a in asked) for s in stems)):
            if runs[-1] and _capitalised(runs[-1][-1]) and _capitalised(w) and not _ends_clause(words[i - 1]):
                runs[-1].append(w)  # the name the run started goes on
                name_tail = True
                continue
            runs.append([])
        elif name_tail and not (_capitalised(w) and not _ends_clause(words[i - 1])):
            runs.append([w])  # past the name: a new run
        else:
            runs[-1].append(w)
        name_tail = False
    trimmed = [t for r in runs if (t := _trim(r)) and len(t) <= _MAX_SPAN]
    best = max(trimmed, key=len, default=[])
    return " ".join(best).strip(".,;:") or None


def _capitalised(word: str) -> bool:
    bare = word.strip(".,;:()[]\"'“”‘’")
    return bool(bare) and bare[0].isupper()


def _ends_clause(word: str) -> bool:
    return word.endswith((".", ",", ";", ":", ")"))


def _near(word: str, asked: str) -> bool:
    """The same word, or a long one misspelt by one letter ("recieved" for "received")."""
    if word == asked:
        return True
    if min(len(word), len(asked)) < 6 or abs(len(word) - len(asked)) > 1:
        return False
    return _edits(word, asked) <= 2  # a swap of two letters is two edits


def _edits(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _trim(words: list[str]) -> list[str]:
    while words and words[0].strip(".,;:()").casefold() in _EDGE_WORDS:
        words = words[1:]
    while words and words[-1].strip(".,;:()").casefold() in _EDGE_WORDS:
        words = words[:-1]
    return words
