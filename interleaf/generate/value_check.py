"""Does a cited quote hold a sentence's number under the labels the sentence gives it?

A number copied from the wrong row ("Okapi gets 69.8" where 69.8 is the "Okapi + Kestrel" row's) or from
a sentence about another setting is in the quote, but not as the sentence states it. The check:

- in a table (a quote whose text, OCR-text or VLM-text holds Markdown rows), some cell stating the
  number lies in a row the sentence names (all the words of one of its label cells, the cells that
  state no number, and no other row's longer label in that place that the sentence names as well;
  named in the clause that states the number, where that clause names any row),
  under a column whose header shares as many of the sentence's words as any other column's does;
- in prose, some sentence of the quote stating the number holds at least half of the words the
  claim's clause around the number shares with the quote (when it shares two or more).

A number the quote states nowhere is another failure (citations.py counts it); a number stated in
a caption or a label only is taken as held (nothing to tell it from).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.generate.differences import WORKED_OUT, worked_out_holds
from interleaf.generate.part_count import counts_in_plain_sight
from interleaf.generate.procedures import steps_held
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.sentences import TableRow, content_words, dehyphenate, numbers_in, split_prose, table_rows
from interleaf.generate.table_cells import label_columns
from interleaf.text.references import FAMILY_WORDS, REFERENCE, caption_label

# The claim's words counted around a number: its clause (between punctuation that ends one).
_CLAUSE = re.compile(r"[;:]|,\s+(?=[A-Za-z])|\s+(?:and|while|whereas|but)\s+")
MIN_SHARED = 0.5  # of the clause's words, in the quote's sentence that states the number
# "8 figures": a count of numbered items (item_count.py), no value any quote states
# (tables and figures only: "800 samples" is no count of numbered items)
_COUNT = re.compile(
    rf"(?<![\d.,])(\d+)\s+(?:{'|'.join(w for f in ('figure', 'table') for w in FAMILY_WORDS[f])})\b", re.I
)
_PAGE_GIVEN = re.compile(r"\(pages?\s+\d+(?:\s*[-–]\s*\d+)?\)", re.I)  # "(page 7)": where an item is


def number_held(claim: str, number: str, quote: ContextQuote) -> bool | None:
    """True: some place of the quote states `number` under the claim's labels; False: it states it,
    but never so; None: the quote states it nowhere (or only in a caption or label)."""
    if steps_held(claim, number, quote):  # "To descale the kettle takes 3 numbered steps"
        return True
    claim_words = set(content_words(claim))
    spaced = " ".join(claim.split())
    for text in (quote.ocr_text, quote.vlm_text, quote.text):
        rows = table_rows(text or "")
        cells = [(r, j) for r in rows for j, c in enumerate(r.cells) if number in numbers_in(c)]
        if any(_names_with(r.cells[j], claim_words) for r, j in cells):
            return True  # the number is part of a name the claim gives: "Vireo-9B (2027)"
        if not cells:
            continue
        labels = label_columns(rows)
        if any(j in labels and _stated_whole(r.cells[j], spaced) for r, j in cells):
            return True  # a label the claim gives whole: the age band "80-84" is no value
        # a row labelled by numbers ("85-89") is named by its label stated whole; where the claim
        # states one such label, a row whose numbers it does not state is not the row it names
        banded = {id(r) for r in rows if any(j in labels and numbers_in(c) for j, c in enumerate(r.cells))}
        stated = {id(r) for r in rows if any(j in labels and _stated_whole(c, spaced) for j, c in enumerate(r.cells))}
        if stated & banded:
            cells = [(r, j) for r, j in cells if id(r) not in banded or id(r) in stated]
            if not cells:
                return False
        # the rows are named in the clause that states the number, where it names any ("69.8 for
        # Okapi + Kestrel; and 54.2 for Okapi"), else anywhere in the claim ("Okapi and Kestrel get 54.2 and 72.7")
        clause = _clause_words(claim, number)
        named_there = any(words <= clause for r in rows for _, words in _label_words(r, -1) if words)
        scope = clause if named_there else claim_words
        return any(_row_named(r, j, rows, claim_words, scope) for r, j in cells)
    prose = split_prose(dehyphenate(quote.text or ""))
    sentences = [s for s in prose if number in numbers_in(s)]
    if not sentences:
        return None
    # the labels the claim gives the number that the quote uses at all: words it takes from elsewhere
    # (the paragraph before, the question) tell nothing about where in the quote the number sits
    known = (_clause_words(claim, number) or claim_words) & {w for s in prose for w in content_words(s)}
    if len(known) < 2:
        return True
    return any(len(known & set(content_words(s))) >= MIN_SHARED * len(known) for s in sentences)


def checked_words(claim: str) -> str:
    """The claim as its words are checked against its quotes: a count it states in plain sight ("The
    document numbers 5 appendices: Appendix A (page 7), ..., Appendix E (page 17)") is backed by the
    labels it lists, each of its quote; the words framing the count, up to the count's noun, and the
    pages it gives are the answer's own, printed by no quote. Any other claim as it is."""
    counts = _plain_sight_counts(claim)
    if not counts:
        return claim
    return _PAGE_GIVEN.sub(" ", claim[max(m.end() for m in counts) :])


def _plain_sight_counts(claim: str) -> list[re.Match[str]]:
    """The counts the claim states in plain sight, in order: of tables or figures ("8 figures, from
    Figure 1 to Figure 8"), of parts ("5 appendices: Appendix A, ..."; part_count.py)."""
    counts = [m for m in _COUNT.finditer(claim) if _in_plain_sight(claim, m)]
    return sorted([*counts, *counts_in_plain_sight(claim)], key=lambda m: m.start(1))


def stated_numbers(claim: str) -> list[str]:
    """The values a claim states: its numbers but those of the places it names ("Table 2", "page 5")
    and a difference it works out in plain sight ("14.7 (63.4 − 48.7)": the two it comes from are
    the values to check)."""
    for m in reversed(_plain_sight_counts(claim)):  # the count shown by the labels it lists
        claim = claim[: m.start(1)] + " " * (m.end(1) - m.start(1)) + claim[m.end(1) :]
    claim = REFERENCE.sub(" ", claim)
    # "a difference of 14.7 (63.4 − 48.7)", "in total 41 (24 + 12 + 5)"
    for m in WORKED_OUT.finditer(claim):
        if worked_out_holds(m):
            claim = claim[: m.start(1)] + " " * (m.end(1) - m.start(1)) + claim[m.end(1) :]
    return numbers_in(claim)


def _in_plain_sight(claim: str, count: re.Match[str]) -> bool:
    """The claim lists the items counted after the count ("4 tables: Table 1-1, ..., Table 2-3"), or
    names the item numbered as the count ("8 figures, from Figure 1 to Figure 8")."""
    label = caption_label(f"{count.group(0).split()[1]} {count.group(1)}")
    if label is None or int(count.group(1)) < 1:
        return False
    named = {caption_label(m.group(0)) for m in REFERENCE.finditer(claim, count.end())}
    listed = {n for n in named if n is not None and n.family == label.family}
    return len(listed) == int(count.group(1)) or label.mentions().search(claim, count.end()) is not None


def numbers_unheld(claim: str, quotes: Sequence[ContextQuote]) -> list[str]:
    """The claim's values that its cited quotes state, but none under the claim's labels."""
    out = []
    for n in stated_numbers(claim):
        verdicts = [number_held(claim, n, q) for q in quotes]
        if any(v is False for v in verdicts) and not any(v is True for v in verdicts):
            out.append(n)
    return out


def _label_words(row: TableRow, column: int) -> list[tuple[int, set[str]]]:
    """The words of each of the row's label cells (those stating no number, `column` aside), and
    of its group label (at -1)."""
    labels = [(j, set(content_words(c))) for j, c in enumerate(row.cells) if j != column and not numbers_in(c)]
    return [*labels, (-1, set(content_words(row.group)))]


def _row_named(
    row: TableRow, column: int, rows: Sequence[TableRow], claim_words: set[str], naming_words: set[str]
) -> bool:
    """The claim names the row: `naming_words` (the claim's, or its clause's) hold all the words of
    one of its label cells (or of its group label), and no other row's label in that place that
    holds those words and more ("Okapi + Kestrel gets 69.8": the "Okapi + Kestrel" row is named, the "Okapi"
    row is not); and the claim, or the clause stating the number, names the column, when its header
    has words."""
    # the clause stating the number names its column best where the claim states several
    # columns' values ("Recall 18.0; Error 6.0 for ..."): there, the whole claim names each column
    if not (_column_named(row, column, naming_words) or _column_named(row, column, claim_words)):
        return False
    labels = _label_words(row, column)
    for j, words in labels:
        if not words or not words <= naming_words:
            continue
        others = [set(content_words(r.group if j < 0 else (r.cells[j] if j < len(r.cells) else ""))) for r in rows]
        if not any(words < other <= naming_words for other in others):
            return True
    return not any(words for _, words in labels)  # a row with no label is named by its column alone


def _stated_whole(cell: str, spaced_claim: str) -> bool:
    """The claim (its white space runs made single spaces) prints the cell as it is: "80-84" in
    "... for Age, 80-84"."""
    wanted = " ".join(cell.split())
    return bool(wanted) and re.search(rf"(?<![\w.]){re.escape(wanted)}(?![\w]|\.\d)", spaced_claim) is not None


def _names_with(cell: str, claim_words: set[str]) -> bool:
    """A cell that names with a number ("Vireo-9B (2027)", "Phase 2 trial"): it has words of its
    own, all of them in the claim."""
    words = set(content_words(cell))
    return bool(words) and words <= claim_words


def _column_named(row: TableRow, column: int, claim_words: set[str]) -> bool:
    """The claim's words name this column as much as any other ("Top-5 · CQ", not "Top-5 ·
    WebTrivia", for "Top-5 on CQ"); a column with no header is named by its row alone."""
    overlap = [len(set(content_words(h)) & claim_words) for h in row.header]
    if column >= len(overlap) or not content_words(row.header[column]):
        return True
    return overlap[column] > 0 and overlap[column] == max(overlap)


def _clause_words(claim: str, number: str) -> set[str]:
    for clause in _CLAUSE.split(claim):
        if number in numbers_in(clause):
            return set(content_words(clause))
    return set()
