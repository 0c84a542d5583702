"""Values printed "respectively" (interleaf/generate/respectively.py): the short answer takes the
value in the position of the thing the question names, on real paragraphs of MMLongBench-Doc's
dev half read from their text layer."""

from __future__ import annotations

import pymupdf
import pytest

from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.respectively import value_in_order
from tests.conftest import CORPUS

DEV = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs"
SURVEY = ("PG_20.07.30_U.S.-Views-China_final.pdf", 10, "82% vs. 54%, respectively")
FILING = ("BESTBUY_2023_10K.pdf", 31, "$891 million, respectively")


def _paragraph(pdf: str, idx: int, holding: str) -> str:
    """The text block of the page that holds `holding`, its lines joined."""
    with pymupdf.open(DEV / pdf) as doc:
        blocks = [" ".join(b[4].split()) for b in doc[idx].get_text("blocks")]
    (block,) = [b for b in blocks if holding in b]
    return block


def _short_answer(question: str, pdf: str, idx: int, holding: str) -> tuple[str | None, str]:
    text = _paragraph(pdf, idx, holding)
    quote = ContextQuote("q1", "text", 1, "d", pdf, idx, "text", text, None)
    (answer,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, (quote,))], lambda p: b"")
    assert answer.error is None
    return answer.short_answer, answer.markdown


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("What share of Democrats say China has done a bad job dealing with the coronavirus?", "54"),
        ("What percentage of Republicans say China has done a bad job dealing with the coronavirus?", "82"),
    ],
)
def test_the_composer_gives_the_named_groups_value(question: str, value: str) -> None:
    """The sentence names Republicans first and Democrats second, then "82% vs. 54%, respectively";
    the number nearest the question's words is 82 whichever group is asked (without this module the
    Democrats' question is answered 82)."""
    short, markdown = _short_answer(question, *SURVEY)
    assert short == value, markdown
    assert "respectively" in markdown, markdown


def test_a_filings_reporting_units_each_get_their_own_carrying_value() -> None:
    text = _paragraph(*FILING)
    assert value_in_order("What is the carrying value of the goodwill of Best Buy Health?", text) == "891"
    assert value_in_order("What is the carrying value of the goodwill of Best Buy Domestic?", text) == "492"
    # the company's name is in both units' names: which unit is asked is not said, so no value is taken
    assert value_in_order("What goodwill does Best Buy have?", text) is None


def test_values_given_for_dates_are_left_to_the_dates_rule() -> None:
    """ "$141 million, $214 million and $307 million as of January 28, 2023, January 29, 2022, and
    January 30, 2021, respectively": the list before "respectively" is of dates, not values."""
    with pymupdf.open(DEV / FILING[0]) as doc:
        text = " ".join(" ".join(p.get_text().split()) for p in doc)
    sentence = next(s for s in text.split(". ") if "Unrecognized tax benefits of" in s and "respectively" in s)
    assert value_in_order("What were the unrecognized tax benefits as of January 29, 2022?", sentence) is None
