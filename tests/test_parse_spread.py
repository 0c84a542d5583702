"""Two printed pages on one PDF page (a spread) are read as two pages: regions, rows of words and OCR
lines, and reading order per printed page; quotes keep the PDF page number and boxes in the
sheet's coordinates (issue 51). An ordinary two-column page is not a spread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.words import text_layer_words
from tests.conftest import CORPUS
from tests.support.structure_pages import parse_pages, quote_with

DEV = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs"
PROSPECTUS = DEV / "2024.ug.eprospectus.pdf"  # A3 sheets, each two A4 pages of a brochure
BROCHURE = DEV / "GPL-Graduate-Studies-Professional-Learning-Brochure-Jul-2021.pdf"  # A4 sheets, two A5 pages


def sides_in_reading_order(quotes: list[dict[str, Any]], fold: float) -> list[str]:
    """Each quote's printed page ("left" or "right") in reading order; "both" for a box across the fold."""
    out = []
    for q in sorted(quotes, key=lambda q: q["layout_idx"]):
        x0, _y0, x1, _y1 = q["bbox"]
        out.append("left" if x1 <= fold + 1 else "right" if x0 >= fold - 1 else "both")
    return out


def test_a_brochure_spread_is_read_as_two_pages() -> None:
    # sheet 11 holds printed pages 18 and 19; read as one page, the layout model saw one figure over
    # the whole sheet, whose text ran from page 18 into page 19 row by row
    quotes, pages = parse_pages(PROSPECTUS, (11,))
    fold = pages[0]["width"] / 2
    assert {q["page_idx"] for q in quotes} == {10}
    sides = sides_in_reading_order(quotes, fold)
    assert "both" not in sides
    assert sides == sorted(sides) and sides[0] == "left" and sides[-1] == "right"  # page 18 first
    school = quote_with(quotes, 11, "COMPUTER SCIENCE AND ENGINEERING (SCSE)")
    assert "MECHANICAL" not in school["text"]  # the heading beside it on page 19
    assert "COMPUTER" not in quote_with(quotes, 11, "SCHOOL OF MECHANICAL AND AEROSPACE ENGINEERING (MAE)")["text"]
    # each printed page's number is its own quote, on its own side, where the sheet prints it
    numbers = {q["text"].strip(): q["bbox"] for q in quotes if q["text"].strip() in ("18", "19")}
    assert numbers["18"][2] < 100 and numbers["19"][0] > 2 * fold - 100, numbers


def scanned(pdf: Path, page: int, folder: Path, dpi: int = 150) -> Path:
    """A real page as a scan: its picture alone on a page of the same size, no text layer."""
    with pymupdf.open(pdf) as src, pymupdf.open() as out:
        sheet = src[page - 1]
        target = out.new_page(width=sheet.rect.width, height=sheet.rect.height)
        target.insert_image(target.rect, pixmap=sheet.get_pixmap(dpi=dpi))
        path = folder / f"{pdf.stem}-p{page}-scan.pdf"
        out.save(path)
    return path


def test_a_scanned_spread_keeps_its_ocr_lines_on_their_own_page(tmp_path: Path) -> None:
    # the brochure's sheet 5 scanned: printed page 6 lists the programmes, page 7 tabulates their
    # duration; read as one page, both became one figure whose OCR text ran across the two pages
    quotes, pages = parse_pages(scanned(BROCHURE, 5, tmp_path), (1,))
    assert pages[0]["ocr_used"]
    fold = pages[0]["width"] / 2
    sides = sides_in_reading_order(quotes, fold)
    assert "both" not in sides and sides == sorted(sides) and sides[0] == "left" and sides[-1] == "right"
    table = quote_with(quotes, 1, "Programme Full-Time Part-Time Mode")
    assert table["bbox"][0] >= fold - 1
    for q in quotes:  # no quote's text holds lines of both pages
        text = q["text"] or ""
        assert not ("GRADUATE" in text and "Full-Time" in text), text[:200]


def test_a_two_column_paper_page_is_not_a_spread() -> None:
    from interleaf.parse.layout.spread import find_gutter  # here: the tests above run on any version

    # MAVIS's page 4: no word crosses its middle, and the column gap keeps 1.5 text lines either
    # side of it, as far as a spread's gutter must: only its shape (portrait) says it is one page
    with pymupdf.open(CORPUS / "docs" / "mavis-aaai2026.pdf") as pdf:
        page = pdf[3]
        words, _hidden = text_layer_words(page)
        width, height = page.rect.width, page.rect.height
    fold = width / 2
    assert words and not [w for w in words if w.x0 < fold < w.x1]
    assert find_gutter(words, width, height) is None


def test_a_slide_whose_words_leave_its_middle_is_one_page() -> None:
    # a 16:9 slide (no text layer: read by OCR) whose chart's month labels leave a gap across the
    # middle, 1.6 text lines either side: its halves are not shaped like pages, and the chart stays whole
    quotes, pages = parse_pages(DEV / "0e94b4197b10096b1f4c699701570fbf.pdf", (5,))
    assert pages[0]["ocr_used"]
    chart = quote_with(quotes, 5, "June July August October")
    assert chart["bbox"][0] < pages[0]["width"] / 2 < chart["bbox"][2]
