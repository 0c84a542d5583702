"""Which row of the chosen candidate's table answers: a caption gives way to its row that answers
(`row_instead`), a sentence or a figure's text to the row and column the question names
(`named_cell_instead`), the row whose label the question states most fully to a row merely holding
its words (`named_row_instead`), and for "which ... highest" the row holding the extreme
(`extreme_instead`), the answer saying what it compared (`extreme_note`). Used by offline.py once
the fitted ranker has chosen a candidate."""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.evidence import fold
from interleaf.generate.asking import Part
from interleaf.generate.differences import asks_difference
from interleaf.generate.offline_scoring import Scored, compared_group, extreme_row_ids, sums_up, superlative
from interleaf.generate.offline_units import Unit
from interleaf.generate.part_answer import evidence_of
from interleaf.generate.relevance import Relevance
from interleaf.generate.sentences import TableRow, numbers_in
from interleaf.generate.table_cells import label_chars_stated


def extreme_note(chosen: Scored, part: Part, units: Sequence[Unit]) -> str:
    """What a superlative's answer was compared over: "the highest of the table's rows" (no count: a
    number the quote does not print would be a claim its citation does not back)."""
    if chosen.unit.row is None:
        return ""
    table = [u for u in units if u.quote is chosen.unit.quote and u.row is not None]
    word = superlative(part.text)
    if not word or id(chosen.unit) not in extreme_row_ids(part.text, table):
        return ""
    group = compared_group(part.text, table)
    return f"the {word.casefold()} of the table's {f'{group} ' if group else ''}rows"


def row_instead(
    chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit], relevance: Relevance
) -> Scored:
    """A table's caption says what the table is about, its rows what it holds: where a row of the
    same table answers the part too ("which variant has the lowest error in Table 6"), the
    best-ranked such row."""
    if chosen.unit.kind != "caption" or not any(u.quote is chosen.unit.quote and u.row for u in units):
        return chosen
    same_table = (s for s in ranked if s.unit.quote is chosen.unit.quote and s.unit.row is not None)
    return next((s for s in same_table if relevance.check(part, evidence_of(s.unit, units)).ok), chosen)


def named_row_instead(chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit]) -> Scored:
    """The row whose label cells the question states most fully wins over the chosen row of its
    table: "Okapi" names the Okapi row, not the "Okapi + Kestrel" one that holds the word too, and "Model-B
    + Reflect" names the "Model-B + Reflect (ours)" row, not the "Model-B" one inside it."""
    if chosen.unit.row is None:
        return chosen
    asked = fold(part.text)
    same_table = [s for s in ranked if s.unit.quote is chosen.unit.quote and s.unit.row is not None]
    named = {id(s): label_chars_stated(s.unit.row, asked) for s in same_table if s.unit.row is not None}
    most = max(named.values(), default=0)
    if named.get(id(chosen), 0) >= most:
        return chosen
    return next(s for s in same_table if named[id(s)] == most)


def _total_or_printed(missing: str, totals: set[str], printed: str) -> bool:
    """A number the row lacks is fine only as the total of the rows compared; a name, where the
    table prints it."""
    numbers = numbers_in(missing)
    return set(numbers) <= totals if numbers else fold(missing) in printed


def extreme_instead(
    chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit], relevance: Relevance
) -> Scored:
    """For "which ... the highest ...", the row of the chosen row's table that holds the extreme.
    A name the part gives that the row does not print may be printed elsewhere in its table: "which
    group of members has the most responses" over rows "All members", "Charter members", "New members",
    ... names what every row is of."""
    if chosen.unit.row is None:
        return chosen
    table = [u for u in units if u.quote is chosen.unit.quote and u.row is not None]
    top = extreme_row_ids(part.text, table)
    if not top or id(chosen.unit) in top:
        return chosen
    quote = chosen.unit.quote
    printed = fold(" ".join(filter(None, (quote.text, quote.caption, quote.ocr_text))))
    # the numbers of the rows that sum up the others: "among the 900 members in all" names the whole
    totals = {n for u in table if u.row is not None and sums_up(u.row) for n in numbers_in(" ".join(u.row.cells))}
    for s in ranked:
        if id(s.unit) not in top:
            continue
        finding = relevance.check(part, evidence_of(s.unit, units))
        # a number the row lacks is a condition it fails ("(9 negatives)"), wherever else it is
        # printed, but for the total of the rows compared
        in_table = all(_total_or_printed(m, totals, printed) for m in finding.missing)
        if finding.ok or (finding.missing and in_table):
            return s
    return chosen


def named_cell_instead(chosen: Scored, part: Part, candidates: Sequence[Scored], threshold: float) -> Scored:
    """For a part asking one value ("how many Vireo owners say they descale very often?"), a
    sentence or a figure's text gives way to the best table row above the threshold whose label and
    one of whose value columns the part states whole: that cell is what it asks. Not where the part asks a
    difference or an extreme: one cell gives neither. Worth on the MMLongBench-Doc dev half: one
    answerable question more right (of 234), a chart's share the answer took from another chart's
    words; none right before goes wrong, and the corpus dev sets do not move."""
    if chosen.unit.row is not None or part.want not in ("number", "money"):
        return chosen
    if asks_difference(part.text) or superlative(part.text):
        return chosen
    asked = fold(part.text)
    named = (
        s for s in candidates if s.score >= threshold and s.unit.row is not None and _names_cell(s.unit.row, asked)
    )
    return next(named, chosen)


def _names_cell(row: TableRow, asked: str) -> bool:
    """The folded question states the row's label and the header of one of its value cells whole."""
    if not label_chars_stated(row, asked):
        return False
    heads = {fold(h) for h, cell in zip(row.header[1:], row.cells[1:], strict=False) if numbers_in(cell)}
    return any(re.search(rf"(?<!\w){re.escape(h)}(?!\w)", asked) for h in heads if re.search(r"[^\W\d_]{2}", h))
