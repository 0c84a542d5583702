"""Counting the steps of a procedure the document numbers (step_count.py, procedures.py), on the dev
half's refrigerator guide: its pages print "To replace the grille:" and the lines numbered after it.
The answers are checked as the product checks them: each count is backed by the quote that numbers
the steps under the same lead."""

from __future__ import annotations

from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.procedures import procedures
from interleaf.generate.protocol import AnswerRequest, ContextQuote, GeneratedAnswer
from tests.support.dev_half import dev_pdf

GUIDE = "owners-manual-2170416.pdf"


def _page(page: int, number: int) -> ContextQuote:
    """A page of the guide (0-based) as one text quote of the context, numbered `number`."""
    with dev_pdf(GUIDE) as document:
        text = document[page].get_text()
    return ContextQuote(f"p{page}", "text", number, "guide", GUIDE, page, "text", text)


def _answer(question: str, quotes: tuple[ContextQuote, ...]) -> GeneratedAnswer:
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, quotes)], lambda p: b"")
    assert a.error is None
    return a


def test_the_steps_of_the_procedure_the_question_names_are_counted() -> None:
    grille = _page(16, 1)
    leads = {p.lead: p.steps for p in procedures(grille)}
    assert leads == {"To remove the grille": 3, "To replace the grille": 3}, leads
    question = "How many steps are required to replace the grille? Write the answer in integer format."  # mlb-D-189's
    a = _answer(question, (grille,))
    assert a.markdown.startswith("To replace the grille takes 3 numbered steps (page 17) [1]"), a.markdown
    assert a.short_answer == "3"
    checked = check_answer(a.markdown, (grille,), question=question)
    assert checked.sentences and all(s.supported for s in checked.sentences), checked.sentences
    # a procedure the page does not print ("to clean") is not counted from one it does
    other = _answer("How many steps are required to clean the grille?", (grille,))
    assert "numbered steps" not in other.markdown, other.markdown


def test_the_procedure_with_more_steps_is_named() -> None:
    quotes = (_page(9, 1), _page(12, 2))  # the trim piece (2 steps), the crisper (4)
    # mlb-D-188's question
    question = "Which creation has more steps, To remove the drop-in trim piece or to remove the crisper?"
    a = _answer(question, quotes)
    assert a.markdown.startswith("To remove the crisper takes 4 numbered steps (page 13) [2]"), a.markdown
    assert "to remove the trim piece takes 2 numbered steps (page 10) [1]" in a.markdown, a.markdown
    assert a.short_answer == "crisper"
    checked = check_answer(a.markdown, quotes, question=question)
    assert all(s.supported for s in checked.sentences), checked.sentences
    fewer = _answer(question.replace("more steps", "fewer steps"), quotes)
    assert fewer.short_answer == "trim piece", fewer.short_answer
