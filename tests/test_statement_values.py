"""A ratio its name spells out (statement_values.py), worked out from the statements of two of the
dev half's annual reports (../shared/benchmarks/mmlongbench-dev): Amazon's 2017 statement of
operations (page 38), balance sheet (page 40) and a note's table printing "Other long-term debt"
(page 56); Best Buy's 2023 statement of earnings (page 40), balance sheet (page 39) and the
segment table (page 25) printing "Gross profit" for the company and again for one segment. The
pages are read by the parser, as ingest reads them."""

from __future__ import annotations

import re
from decimal import Decimal

import pyarrow as pa

from interleaf.evaluate.metrics.correctness import answer_correct
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest
from interleaf.generate.statement_values import (
    ItemAsked,
    RatioAsked,
    item_asked,
    printed_lines,
    ratio_asked,
    statement_asked,
    statement_lines,
)
from tests.support.dev_half import dev_question, parsed_context

AMAZON, BEST_BUY = "AMAZON_2017_10K.pdf", "BESTBUY_2023_10K.pdf"
_KINDS = ("text", "table", "figure", "reference")


def test_the_ratio_a_question_names() -> None:
    asked = ratio_asked(
        "What is Kestrel's FY2019 net sales to average total assets ratio? Round to two decimal places."
    )
    assert asked == RatioAsked("net sales", "total assets", (False, True), 2019, 2, False)
    asked = ratio_asked(
        "What is the kettle to harbour ratio for the fiscal year ending May 3, 2021, in percentage terms?"
    )
    assert asked is not None and (asked.numerator, asked.year, asked.percent) == ("kettle", 2021, True)
    assert ratio_asked("What is the Okapi ratio in 2020?") is None  # its name spells out no formula
    assert ratio_asked("What is the net sales to total assets ratio?") is None  # no year named


def test_the_line_item_a_question_names() -> None:
    assert item_asked("What goodwill does Kestrel have for fiscal 2023?") == ItemAsked("goodwill", 2023)
    assert item_asked("What is the total current assets in FY2019 for Okapi?") == ItemAsked(
        "total current assets", 2019
    )
    assert item_asked("How many kettles did Vireo sell in 2020?") is None  # a count, not a line's value
    assert item_asked("What is Okapi's FY2019 net sales to total assets ratio?") is None  # a ratio
    assert item_asked("What is the harbour master's name?") is None  # no year named


def _answer(name: str, pages: tuple[int, ...], question_id: str) -> tuple[str, str]:
    context = parsed_context(name, pages, _KINDS)
    gold = dev_question(question_id)
    assert statement_asked(gold["question"]) is not None
    lines = [(printed, q.quote_id) for q in context for _, _, printed in printed_lines(q.text)]
    request = AnswerRequest("q", gold["question"], context, statement_lines=tuple(lines))
    (answer,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert answer_correct(answer.markdown, gold["must_include"]), answer.markdown
    return answer.markdown, answer.short_answer


def test_an_average_over_the_year_before_and_not_a_longer_label() -> None:
    """Interest expense 848 over long-term debt averaged over 2016 and 2017 (7,694 and 24,743);
    the note's "Other long-term debt" is another item."""
    markdown, short = _answer(AMAZON, (37, 39, 55), "mlb-D-272")
    assert short == "0.052" and "the average of 7,694 (2016) and 24,743 (2017)" in markdown, markdown
    assert re.search(r"Interest expense 848 \[\d+\]", markdown), markdown  # the statement quoted is cited


def test_a_label_printed_with_two_values_takes_the_one_most_lines_print() -> None:
    """ "Gross profit" is 9,912 on the statement of earnings and in the segment table's company rows,
    9,106 for the Domestic segment: the company's 9,912 over total assets 15,803."""
    context = parsed_context(BEST_BUY, (24, 38, 39), _KINDS)
    printed = [read for q in context for label, read, _ in printed_lines(q.text) if label == "Gross profit"]
    assert {r[2023] for r in printed} == {Decimal(9912), Decimal(9106)}  # the page holds both
    markdown, short = _answer(BEST_BUY, (24, 38, 39), "mlb-D-291")
    assert short == "0.627" and "Gross profit 9,912" in markdown and "Total assets 15,803" in markdown, markdown


def test_a_line_item_s_value_for_the_year_asked() -> None:
    """The balance sheet's Goodwill line, 1,383 for the fiscal year ending January 28, 2023 (1,384
    the year before)."""
    markdown, short = _answer(BEST_BUY, (38,), "mlb-D-290")
    assert short == "1383" and re.search(r"Goodwill for 2023 is 1,383 \[\d+\]", markdown), markdown


def test_the_lines_a_document_s_ratio_question_is_worked_out_from_join_its_context() -> None:
    """statement_lines over a quotes table of the three Amazon pages: only the lines of the two items."""
    context = parsed_context(AMAZON, (37, 39, 55), _KINDS)
    quotes = pa.table(
        {
            "quote_id": [q.quote_id for q in context],
            "doc_id": ["amazon"] * len(context),
            "page_idx": [q.page_idx for q in context],
            "layout_idx": list(range(len(context))),
            "kind": [q.kind for q in context],
            "text": [q.text for q in context],
            "caption": [q.caption for q in context],
        }
    )
    gold = dev_question("mlb-D-272")
    found = statement_lines(quotes, [("q", gold["question"], ("amazon",)), ("other", "How many kettles?", ("amazon",))])
    assert list(found) == ["q"]
    labels = [line.split("\n")[1].rsplit(" ", 2)[0] for line, _ in found["q"]]
    assert labels == ["Interest expense (459)", "Long-term debt"], found


def test_a_label_naming_years_is_no_line_of_years() -> None:
    """A line naming years in its label ("Kettle notes due 2027 and 2030") does not set the years
    of the lines under it; a line of dates with their days does."""
    years = "June 30, 2024 June 30, 2023"
    text = f"{years}\nKettle notes due 2027 and 2030 1,000 1,000\nInventories 4,210 3,987"
    read = {2024: Decimal(4210), 2023: Decimal(3987)}
    assert printed_lines(text) == [("Inventories", read, f"{years}\nInventories 4,210 3,987")]
