"""A figure's printed labels and values read as table rows.

A chart with its data labels, a statement page stored as an image, a table the parser took for a
picture: their text comes back (from the text layer or OCR) one printed line at a time, a label
followed by its values ("Men 54 41", "Net income per share $ 1.20 $ 0.98 $ 1.05").
Read as rows of a table, with the column labels printed above them where those can be paired, they
take part in everything a table's rows do: the row label stated whole, the column the question
names, the highest and the lowest of a column. A line that is not label-and-values (a title, a
note, a sentence) is left to the figure's blocks.
"""

from __future__ import annotations

import re
from collections import Counter

from interleaf.generate.sentences import TableRow, with_column_units

# One printed value: 82, 15%, $46,298, (34), +16, -8.8%, 0.833; a lone dash is an empty cell.
_VALUE = re.compile(r"[(]?[+\-–−]?[$€£]?\d(?:[\d,]*\d)?(?:\.\d+)?%?[)]?\*?|[-–—]")
_CURRENCY = {"$", "€", "£"}
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_MIN_ROWS = 2  # fewer label-and-values lines than this do not make a table
_BAND = re.compile(r"\d+\s?(?:[-–]\s?\d+|\+)")  # "21-34", "65+": a band of ages, sizes, incomes
# the least share of a label's characters that are letters: "Yes/No" and "Ages 21-34" are labels, a
# map's OCR debris ("# ø Elm Rd # ø") is not (set by reading the dev half's figures, not fitted)
_LABEL_LETTERS = 0.5


def _segments(line: str) -> list[tuple[str, list[str]]]:
    """A line as runs of label words each followed by its values: "Idaho 12 Total outlets 215" ->
    [("Idaho", ["12"]), ("Total outlets", ["215"])]. A currency sign printed apart from its amount
    ("$ 1.20") goes with it."""
    out: list[tuple[str, list[str]]] = []
    label: list[str] = []
    values: list[str] = []
    tokens = line.split()
    for i, token in enumerate(tokens):
        if token in _CURRENCY and i + 1 < len(tokens) and _VALUE.fullmatch(tokens[i + 1]):
            continue
        if _VALUE.fullmatch(token) and (label or values or token[0].isdigit()):
            values.append(token)
            continue
        if values:
            out.append((" ".join(label), values))
            label, values = [], []
        label.append(token)
    if label or values:
        out.append((" ".join(label), values))
    return out


def _row(label: str, values: list[str], width: int) -> tuple[str, list[str]] | None:
    """A row of `width` values: values beyond it, at the front, belong to the label ("Ages 21-34 47
    38"); a line with no label takes its first value as one ("55-64 52 31")."""
    if not label and len(values) > width:
        label, values = values[0], values[1:]
    if len(values) > width:
        label, values = " ".join([label, *values[: len(values) - width]]), values[len(values) - width :]
    if not values or not _reads_as_label(label):
        return None
    return label, values


def _reads_as_label(label: str) -> bool:
    """A row's label names something: a word of two letters or more, most of its characters
    letters (a map's street names among OCR debris, "# ø Elm Rd # ø", are not), or an age or size
    band ("55-64", "65+"); a run of bare numbers ("1 2 3") is no label."""
    if _BAND.fullmatch(label):
        return True
    # "Ages 21-34": the band is no debris; "N.Z.": an abbreviation's dots are no debris either
    named = _BAND.sub("", label).replace(" ", "").replace(".", "")
    letters = sum(c.isalpha() for c in named)
    return re.search(r"[^\W\d_]{2}", named) is not None and letters >= _LABEL_LETTERS * len(named)


def _header(line: str, segments: list[tuple[str, list[str]]], width: int) -> tuple[str, ...] | None:
    """A line's column labels for rows of `width` values (two or more): a line of exactly that
    many words or years ("Yes No", "2031 2030 2029"), or of that many phrases each a capital
    opens and no value ("Very often Not at all"), or one naming exactly that many years and
    no other value ("Years Ended June 30, 2026 June 30, 2025"); else None. `segments`: the
    line's `_segments`."""
    if width < 2:
        return None  # one word over one column is as likely a title as a column's label
    tokens = line.split()
    if line.endswith(":"):
        return None  # a group's label ("Other items:")
    # distinct ("Average- Average-" is one line of a header printed over several) and none in lower
    # case ("Share who agree" is a phrase over the chart, not its columns)
    words = len(tokens) == width and len(set(tokens)) == width and not any(t[0].islower() for t in tokens)
    if words and all(_YEAR.fullmatch(t) or not _VALUE.fullmatch(t) for t in tokens):
        return ("", *tokens)
    phrases = _capitalised_phrases(tokens)
    if not words and len(phrases) == width and not any(_VALUE.search(t) for t in tokens):
        # "Very often Now and then Hardly ever". Worth on the MMLongBench-Doc dev
        # half: one answerable question more right (of 234), a chart's share read under the column
        # the question names; the corpus dev sets do not move
        return ("", *phrases)
    years = _YEAR.findall(line)
    trailing = segments[-1][1]
    if len(years) == width and not any(_YEAR.fullmatch(v) is None for v in trailing[-width:]):
        return ("", *years)
    return None


def _capitalised_phrases(tokens: list[str]) -> list[str]:
    """Words as the phrases each capitalised word opens ("Not too much Nothing at all" -> "Not too
    much", "Nothing at all"); none where the first word is not capitalised."""
    if not tokens or not tokens[0][:1].isupper():
        return []
    phrases: list[list[str]] = []
    for token in tokens:
        if token[:1].isupper():
            phrases.append([token])
        else:
            phrases[-1].append(token)
    return [" ".join(p) for p in phrases]


def figure_rows(text: str) -> list[TableRow]:
    """The label-and-values lines of a figure's text as table rows, or none where fewer than two
    lines read so. The row width is the number of values most lines give; each row takes the column
    labels of the nearest line above it that prints them; a line printing two rows side by side
    (two columns of a list) gives both."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    parsed = [_segments(line) for line in lines]
    counts = Counter(len(v) for segments in parsed for label, v in segments if label and v)
    if not counts:
        return []
    width = counts.most_common(1)[0][0]
    rows: list[TableRow] = []
    header: tuple[str, ...] = ()
    for line, segments in zip(lines, parsed, strict=True):
        labels = _header(line, segments, width)
        if labels is not None:
            header = labels
            continue
        labelled = [(label, v) for label, v in segments if v]
        if not labelled or not segments[-1][1]:
            continue  # a line that ends in words is a title, a note or a sentence
        side_by_side = len(labelled) > 1 and len(segments) == len(labelled)
        if side_by_side and all(label and len(v) == width for label, v in labelled):
            made = labelled  # two rows printed side by side
        else:
            words = " ".join(part for label, v in segments[:-1] for part in (label, *v))
            one = _row(" ".join(filter(None, [words, segments[-1][0]])), segments[-1][1], width)
            made = [one] if one else []
        rows += [TableRow((label, *v, *[""] * (width - len(v))), header) for label, v in made]
    if sum(len([c for c in r.cells[1:] if c]) == width for r in rows) < _MIN_ROWS:
        return []
    return with_column_units(rows)
