"""A month of a year the question names (interleaf/generate/months.py): a document that dates nothing
in that month does not answer it, though it prints the year for other months. On a plan of the dev
half of MMLongBench-Doc, read from its text layer: "Revised May 2016", deadlines "By December 31,
2018", "By June 30, 2018". And a year its format instruction gives (expand/instructions.py), on a
survey report of the same half; and the span of days a "when" is answered with."""

from __future__ import annotations

import pymupdf

from interleaf.expand.instructions import told_years
from interleaf.generate.config import OfflineConfig
from interleaf.generate.months import MONTH_YEAR, dates_in
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.relevance import Relevance
from tests.conftest import CORPUS

PLAN = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs" / "e79deb02a0c0e87511080836c5d4347b.pdf"


def _pages() -> list[str]:
    with pymupdf.open(PLAN) as doc:
        return [" ".join(page.get_text().split()) for page in doc]


def test_the_months_a_document_dates() -> None:
    text = " ".join(_pages())
    assert dates_in(text, "May", "2016") and dates_in(text, "Dec", "2018") and dates_in(text, "june", "2018")
    assert "2018" in text and not dates_in(text, "May", "2018")
    # the forms a date takes, each dating its month
    assert dates_in("conducted April 25-May 1, 2018", "May", "2018")
    assert dates_in("filed 05/2017", "May", "2017") and dates_in("as of 2015-03-24", "March", "2015")
    assert not dates_in("filed 05/2017", "June", "2017")
    found = [(m.group(1), m.group(2)) for m in MONTH_YEAR.finditer("revised in Sept. 2019, not in may of 2020")]
    assert found == [("Sept", "2019"), ("may", "2020")]


def test_a_month_the_document_dates_nothing_in_is_said_missing() -> None:
    pages = _pages()
    cover = ContextQuote("q1", "text", 1, "d", PLAN.name, 1, "text", pages[1], None)
    generator = OfflineGenerator(OfflineConfig())

    def answer(question: str) -> tuple[bool, str]:
        request = AnswerRequest("q", question, (cover,), documents_text="\n".join(pages))
        (out,) = generator.generate([request], lambda p: b"")
        return out.answerable, out.abstain_reason or ""

    refused, reason = answer("Who produced the document that was revised on May 2018?")
    assert not refused and "May 2018" in reason, reason
    # the month it was revised in: not refused for the date (whatever the composer makes of the rest)
    assert "May 2016" not in answer("Who produced the document that was revised on May 2016?")[1]


SENIORS = PLAN.parent / "PIP_Seniors-and-Tech-Use_040314.pdf"


def test_a_year_an_instruction_gives_dates_the_question() -> None:
    # two of the dev half's questions, the second the first with its survey's year changed; the
    # survey's date is in the format instruction, which the parts are read without
    asked = (
        "Among the Higher-income seniors, what are the percentage of them go online, has smartphone phone, and own "
        'a tablet computer? Please write the answer in the list format and in descend order,e.g., ["9%","8%"] in '
        "the Pew Research Center’s Internet Project July 18-September 30, {} tracking survey?"
    )
    assert told_years(asked.format(2013)) == ["2013"]
    assert told_years('When was it founded? Write the year, e.g., 1999, or "Not answerable".') == []
    with pymupdf.open(SENIORS) as doc:
        text = "\n".join(" ".join(page.get_text().split()) for page in doc)
    for year, refused in ((2013, False), (2022, True)):
        relevance = Relevance(asked.format(year), (), text)
        assert bool(relevance.never_printed(relevance.parts[0])) is refused, year


COVID = PLAN.parent / "PP_2020.08.06_COVID-19-Restrictions_FINAL-1.pdf"


def test_a_span_of_days_is_the_date_asked() -> None:
    # the survey's dates as the report's chart note prints them, a span across two months: neither
    # split at "Aug." nor cut to its last day
    with pymupdf.open(COVID) as doc:
        (note,) = [" ".join(b[4].split()) for b in doc[3].get_text("blocks") if "Source: Survey" in b[4]]
    quote = ContextQuote("q1", "text", 1, "d", COVID.name, 3, "text", note, None)
    (answer,) = OfflineGenerator(OfflineConfig()).generate(
        [AnswerRequest("q", "When was the survey conducted?", (quote,))], lambda p: b""
    )
    assert answer.short_answer == "July 27-Aug. 2, 2020", answer.markdown
