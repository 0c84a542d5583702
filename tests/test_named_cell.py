"""A question asking one value of a chart's row and column ("How many Hispanics believe the U.S.
can learn a great deal ...?") is answered from the cell its words name (row_choice.named_cell_instead),
on the dev half's report on international cooperation (../shared/benchmarks/mmlongbench-dev): its
page 9 prints a chart of who says the U.S. can learn "A great deal", "A fair amount", ... with a
row per group, and sentences that repeat most of the question's words but give no group's share."""

from __future__ import annotations

from dataclasses import replace

from interleaf.generate.asking import question_parts
from interleaf.generate.offline_scoring import Scored
from interleaf.generate.offline_units import Unit, units_of
from interleaf.generate.row_choice import named_cell_instead
from tests.support.dev_half import dev_question, parsed_context

REPORT = "PG_2020.05.21_International-Cooperation-COVID_FINAL.pdf"
THRESHOLD = 0.01


def _units() -> list[Unit]:
    """Page 9's text and its chart, the chart an image quote whose text describe read from the
    text layer (its `ocr_text`), as the composer reads them."""
    quotes = parsed_context(REPORT, (8,), ("text", "figure"))
    image = [replace(q, modality="image", number=1, ocr_text=q.text) for q in quotes if q.kind == "figure"]
    return [u for q in (*quotes, *image) if q.modality == "image" or q.kind == "text" for u in units_of(q)]


def _ranked(units: list[Unit], first: Unit) -> list[Scored]:
    """`first` above the threshold, then every row (the order the ranker would give, its scores
    above the threshold too)."""
    rows = [u for u in units if u.row is not None]
    return [Scored(u, 0.5 - i / 100, frozenset(), frozenset()) for i, u in enumerate([first, *rows])]


def test_a_sentence_gives_way_to_the_cell_the_question_names() -> None:
    units = _units()
    sentence = next(u for u in units if u.kind == "sentence" and "learn a great deal" in u.text)
    (part,) = question_parts(dev_question("mlb-D-117")["question"])
    ranked = _ranked(units, sentence)
    chosen = named_cell_instead(ranked[0], part, ranked, THRESHOLD)
    assert chosen.unit.row is not None and chosen.unit.row.cells[:2] == ("Hispanic", "53%"), chosen.unit.text


def test_a_difference_an_extreme_or_a_row_already_chosen_is_left_as_it_is() -> None:
    units = _units()
    sentence = next(u for u in units if u.kind == "sentence" and "learn a great deal" in u.text)
    for question in (
        "How much higher is the share of Hispanics than of whites who say the U.S. can learn a great deal?",
        "Which group most often says the U.S. can learn a great deal from other countries?",
    ):
        (part,) = question_parts(question)
        ranked = _ranked(units, sentence)
        assert named_cell_instead(ranked[0], part, ranked, THRESHOLD) is ranked[0], question
    (part,) = question_parts(dev_question("mlb-D-117")["question"])
    white = next(u for u in units if u.row is not None and u.row.cells[0] == "White")
    ranked = _ranked(units, white)
    assert named_cell_instead(ranked[0], part, ranked, THRESHOLD) is ranked[0]
    # below the threshold, no row is taken
    ranked = _ranked(units, sentence)
    assert named_cell_instead(ranked[0], part, ranked, 0.9) is ranked[0]
