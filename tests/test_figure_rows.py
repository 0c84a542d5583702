"""A figure's label-and-values lines read as table rows (interleaf/generate/figure_rows.py), on
real pages of MMLongBench-Doc's dev half as the describe stage reads them (text layer), and the
offline composer answering from such a row."""

from __future__ import annotations

import pymupdf

from interleaf.describe.reading import ReadingSettings, page_texts, read_quote
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.figure_rows import figure_rows
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.sentences import table_rows
from interleaf.pdf.render import render_bgr
from interleaf.pdf.words import words_in_box
from tests.conftest import CORPUS

DEV = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs"
# a bar chart with its values printed: "Bad Good" over "Rep/Lean Rep 82 15"
CHINA = ("PG_20.07.30_U.S.-Views-China_final.pdf", 10, (315.1, 131.2, 549.7, 412.6))


def _figure_text(pdf: str, idx: int, box: tuple[float, float, float, float]) -> str:
    with pymupdf.open(DEV / pdf) as doc:
        pages = page_texts(doc, {}, {idx}, None, {idx})
        inside = words_in_box(list(pages[idx].words), box)
        quote = {"kind": "figure", "bbox": list(box)}
        got = read_quote(quote, inside, pages[idx], lambda: render_bgr(doc[idx], 72), None, ReadingSettings("t"))  # type: ignore[arg-type]
    return got["table_md"] or got["ocr_text"]


def test_a_charts_printed_values_are_rows_under_its_column_labels() -> None:
    rows = figure_rows(_figure_text(*CHINA))
    by_label = {r.cells[0]: r for r in rows}
    assert set(by_label) >= {"Total", "Rep/Lean Rep", "Dem/Lean Dem", "Ages 18-29", "30-49"}, [r.cells for r in rows]
    assert by_label["Rep/Lean Rep"].cells == ("Rep/Lean Rep", "82%", "15%")  # "Total 64% 31%" above
    assert by_label["Rep/Lean Rep"].header == ("", "Bad", "Good")
    assert not any("Source" in r.cells[0] or "Note" in r.cells[0] for r in rows)  # notes end in words


def test_column_labels_of_several_words_each_a_capital_opens() -> None:
    """A chart's legend printed as one line, "A great deal A fair amount Not too much Nothing at all",
    over rows of four values: four column labels."""
    text = _figure_text("PG_2020.05.21_International-Cooperation-COVID_FINAL.pdf", 8, (237.6, 264.9, 547.2, 526.2))
    by_label = {r.cells[0]: r for r in figure_rows(text)}
    assert by_label["Hispanic"].cells == ("Hispanic", "53%", "33%", "11%", "3%"), by_label
    assert by_label["Hispanic"].header == ("", "A great deal", "A fair amount", "Not too much", "Nothing at all")


def test_a_line_charts_bare_data_labels_are_no_rows() -> None:
    """Lines of data labels with no row label ("63 60 61 61 59 58 59") say nothing a row can."""
    text = _figure_text("PP_2020.08.06_COVID-19-Restrictions_FINAL-1.pdf", 18, (313.3, 215.7, 539.0, 323.7))
    assert "63 60 61" in text
    assert figure_rows(text) == []


def test_two_rows_printed_side_by_side_are_two_rows() -> None:
    """A 10-K's store counts, two states to a printed line ("Missouri 17 Total Domestic store count 978")."""
    rows = figure_rows(_figure_text("BESTBUY_2023_10K.pdf", 18, (9.3, 71.1, 601.8, 712.5)).replace("|", " "))
    cells = {r.cells for r in rows}
    assert {("Missouri", "17"), ("Total Domestic store count", "978"), ("Alabama", "11"), ("Nebraska", "5")} <= cells


def test_the_offline_composer_answers_from_a_charts_row() -> None:
    text = _figure_text(*CHINA)
    quote = ContextQuote("q1", "image", 1, "d", CHINA[0], CHINA[1], "figure", text, None, ocr_text=text)
    question = "What percentage of Rep/Lean Rep say China has done a good job dealing with the coronavirus outbreak?"
    (answer,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, (quote,))], lambda p: b"")
    assert answer.error is None
    assert answer.short_answer in ("15", "15%"), answer.markdown
    assert "15%" in answer.markdown and "82" not in answer.markdown, answer.markdown


def test_a_columns_percent_sign_printed_once_holds_for_the_whole_column() -> None:
    """Pew's chart prints "U.S. 29% 41% 29%" over "EU 19 59 21": the EU's 19 is 19%. And "U.S."
    is a row label (its dots are no OCR debris): it was dropped, and with it the only percent signs."""
    text = _figure_text("PG_2020.05.21_International-Cooperation-COVID_FINAL.pdf", 18, (313.1, 111.0, 541.7, 260.6))
    by_label = {r.cells[0]: r.cells for r in figure_rows(text)}
    assert by_label["U.S."] == ("U.S.", "29%", "41%", "29%"), by_label
    assert by_label["EU"] == ("EU", "19%", "59%", "21%"), by_label
    # a 10-K's store counts print no percent sign: read as printed
    stores = figure_rows(_figure_text("BESTBUY_2023_10K.pdf", 18, (9.3, 71.1, 601.8, 712.5)).replace("|", " "))
    assert ("Missouri", "17") in {r.cells for r in stores}


# Pew's seniors report, page 8, as the parser stores the table (some rows)
SENIORS = """| Go online | Go online | Broadband at home |
|---|---|---|
| Total for all 65+ | 59% | 47% |
| Age |  |  |
| 65-69 | 74 | 65 |
| 70-74 | 68 | 55 |
| 80+ | 37 | 21 |
| $75,000+ | 90 | 82 |"""


def test_a_parsed_tables_percent_sign_printed_once_holds_for_its_column() -> None:
    """Pew's seniors report (page 8), as the parser stores the table: "Total for all 65+ | 59% | 47%"
    over "65-69 | 74 | 65". A column whose first value is a bare number is left as printed."""
    table = SENIORS
    by_label = {r.cells[0]: r.cells for r in table_rows(table)}
    assert by_label["65-69"] == ("65-69", "74%", "65%"), by_label
    assert by_label["$75,000+"] == ("$75,000+", "90%", "82%"), by_label
    unmarked = table.replace("59%", "59").replace("47%", "47")
    assert {r.cells[0]: r.cells for r in table_rows(unmarked)}["65-69"] == ("65-69", "74", "65")


def test_a_bands_numbers_in_a_row_label_are_no_values_to_back() -> None:
    """ "55% for Age, 70-74": 70 and 74 name the row (a band of ages). They were checked as values,
    found only in the label and so "not under the sentence's labels": a right answer unsupported."""
    quote = ContextQuote("q1", "image", 1, "d", "seniors.pdf", 7, "table", SENIORS, None)
    right = "The table on page 8 gives Broadband at home 55% for Age, 70-74. ![Table on page 8](image1)"
    (sentence,) = check_answer(right, (quote,), question="What share of seniors aged 70-74 have broadband?").sentences
    assert sentence.supported is True and sentence.values_backed, sentence.citations[0].reason
    wrong = "The table on page 8 gives Broadband at home 65% for Age, 70-74. ![Table on page 8](image1)"
    assert (
        check_answer(wrong, (quote,), question="What share of seniors aged 70-74 have broadband?")
        .sentences[0]
        .supported
        is False
    )  # 65% is the 65-69 row's
