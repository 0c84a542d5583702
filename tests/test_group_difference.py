"""A comparison whose two sides each name several columns ("How many more claims do the Wiki Table
datasets have than the scientific articles datasets?") adds up each side's cells and gives their
difference (differences._column_groups, _group_difference), on the dev half's SciTab paper
(../shared/benchmarks/mmlongbench-dev): its Table 1 on page 4 heads two columns "Wiki Tables" and
two "Scientific Articles", over a row of claim counts and rows of percentages."""

from __future__ import annotations

from interleaf.generate.asking import question_parts
from interleaf.generate.differences import WORKED_OUT, difference, worked_out_holds
from interleaf.generate.sentences import TableRow, table_rows
from interleaf.generate.table_cells import cell_sentence
from interleaf.generate.value_check import numbers_unheld
from tests.support.dev_half import dev_question, parsed_tables

PAPER = "2305.13186v3.pdf"


def _table() -> tuple[list[TableRow], tuple]:
    (table,) = parsed_tables(PAPER, (3,))
    return table_rows(table.text), (table,)


def _row(rows: list[TableRow], label: str) -> TableRow:
    return next(r for r in rows if r.cells[0].startswith(label))


def test_each_side_s_columns_are_added_up_and_the_sentence_gives_every_cell() -> None:
    rows, quotes = _table()
    claims = _row(rows, "Total # of Claims")
    (part,) = question_parts(dev_question("mlb-D-090")["question"])
    worked_out = difference(part, rows, claims)
    assert worked_out is not None
    # 117,854 + 87,026 (the Wiki Tables columns) − 5,715 − 1,225 (the Scientific Articles columns)
    assert worked_out.value == "197940", worked_out
    assert "117,854 + 87,026 − 5,715 − 1,225" in worked_out.written()
    sentence = cell_sentence("Table 1 (page 4)", rows, claims, part, (), worked_out, columns=worked_out.columns)
    assert all(cell in sentence for cell in claims.cells[1:]), sentence
    # every number the sentence states is in the table under its labels, and the sum checks out
    assert numbers_unheld(sentence, quotes) == []
    assert worked_out_holds(next(WORKED_OUT.finditer(sentence)))


def test_shares_and_a_question_naming_one_side_are_not_added_up() -> None:
    rows, _ = _table()
    (part,) = question_parts(dev_question("mlb-D-090")["question"])
    # percentages of different datasets added up are no share of anything
    assert difference(part, rows, _row(rows, "Supported")) is None
    # only one side named: no two groups to compare
    (one_side,) = question_parts("How many more claims do the Wiki Table datasets have?")
    worked_out = difference(one_side, rows, _row(rows, "Total # of Claims"))
    assert worked_out is None or "+" not in worked_out.written()


def test_a_worked_out_sum_that_does_not_add_up_is_not_taken_for_one() -> None:
    for written, holds in (
        ("a difference of 12 (7 + 9 − 3 − 1)", True),
        ("a difference of 14 (7 + 9 − 3 − 1)", False),
        ("a difference of 14.7 (63.4 − 48.7)", True),
        ("a difference of 15.7 (63.4 − 48.7)", False),
    ):
        assert worked_out_holds(next(WORKED_OUT.finditer(written))) is holds, written
