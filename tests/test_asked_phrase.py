"""What a question asks about (interleaf/generate/asking.py's wh-phrase): an adjective in -ed goes on
the noun phrase ("diluted earnings per share"), a participle after the noun ends it ("the stages
depicted in the figure"); and a real statement's row is then read as about what is asked."""

from __future__ import annotations

from interleaf.generate.asking import question_parts
from interleaf.generate.offline import request_units
from interleaf.generate.part_answer import evidence_of
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.relevance import Relevance
from tests.test_figure_rows import _figure_text

FILING = "BESTBUY_2023_10K.pdf"


def test_an_adjective_in_ed_is_part_of_what_is_asked() -> None:
    (part,) = question_parts("What was the company's diluted earnings per share in fiscal 2022?")
    assert part.focus == {"dilut", "earn"}
    (part,) = question_parts("What are the four stages depicted in the figure?")
    assert part.focus == {"stage"}
    (part,) = question_parts("Which are the stages depicted?")
    assert part.focus == {"stage"}


def test_the_statements_row_is_about_the_asked_quantity() -> None:
    """The 10-K's reconciliation of earnings per share (p. 59, a figure on the page) read by the
    describe stage's reader: its "Diluted earnings per share" row answers; with the phrase cut at
    "diluted" the question asked about the company's name, which no row prints."""
    figure = _figure_text(FILING, 58, (11.2, 67.3, 600.1, 262.0))
    context = (ContextQuote("q1", "image", 1, "d", FILING, 58, "figure", figure, None, ocr_text=figure),)
    question = "What was the company's diluted earnings per share in fiscal 2022?"
    relevance = Relevance(question, context)
    (part,) = relevance.parts
    units = request_units(AnswerRequest("q", question, context))
    (row,) = [u for u in units if u.row is not None and u.row.cells[0] == "Diluted earnings per share"]
    assert row.row is not None and row.row.cells[1:] == ("6.29", "9.84", "6.84")
    assert relevance.check(part, evidence_of(row, units)).ok
