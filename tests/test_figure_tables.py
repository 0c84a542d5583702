"""A table the layout model took for a figure is read as a table too; a chart is not
(interleaf/describe/figure_tables.py). Real pages of MMLongBench-Doc's dev half and the corpus,
each region's box as the layout model stored it."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from interleaf.describe.config import DescribeConfig
from interleaf.describe.figure_tables import stands_on_grid
from interleaf.describe.reading import ReadingSettings, page_texts, read_quote
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import render_bgr
from interleaf.pdf.words import words_in_box
from tests.conftest import CORPUS

DEV = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs"


def _figure(pdf: str, idx: int, box: tuple[float, float, float, float]) -> tuple[dict, list]:
    with pymupdf.open(DEV / pdf) as doc:
        pages = page_texts(doc, {}, {idx}, None, {idx})
        inside = words_in_box(list(pages[idx].words), box)
        quote = {"kind": "figure", "bbox": list(box)}
        got = read_quote(quote, inside, pages[idx], lambda: render_bgr(doc[idx], 72), None, ReadingSettings("t"))  # type: ignore[arg-type]
    return got, inside


def test_a_table_in_a_figure_region_gets_its_markdown() -> None:
    """A 10-K's store counts by state, two states to a printed row: one figure region for the page."""
    got, _ = _figure("BESTBUY_2023_10K.pdf", 18, (9.3, 71.1, 601.8, 712.5))
    assert got["table_source"] == "text_layer" and got["ocr_text"]
    rows = [line for line in got["table_md"].splitlines() if line.startswith("| Alabama ")]
    assert rows == ["| Alabama | 11 | Nebraska | 5 |"], got["table_md"]
    assert "| California | 133 | New Mexico | 5 |" in got["table_md"]


def test_a_chart_with_data_labels_is_no_table() -> None:
    """A line chart's data labels line up in rows and columns (its words stand on a grid), but
    most of that grid is empty: no table Markdown."""
    got, inside = _figure("PP_2020.08.06_COVID-19-Restrictions_FINAL-1.pdf", 18, (313.3, 215.7, 539.0, 323.7))
    assert stands_on_grid(inside)  # the case the filled share decides
    assert got["ocr_text"] and got["table_md"] is None and got["table_source"] is None


def test_a_chart_read_by_ocr_with_its_axes_ticks_is_no_table(corpus: Path) -> None:
    """olap-logs-fr.pdf page 10: two line charts as one raster image, read by OCR. Their legends and
    ticks stand in aligned columns, most cells filled; a column of ticks falling by one step (1 …
    0,1 … 0) is a value axis, and says chart."""
    config = DescribeConfig()
    box = (105.1, 303.6, 502.9, 451.8)
    with pymupdf.open(corpus / "docs" / "olap-logs-fr.pdf") as doc:
        page = doc[9]
        pages = page_texts(doc, {}, {9}, None, {9})
        quote = {"kind": "figure", "bbox": list(box)}
        got = read_quote(
            quote, words_in_box(list(pages[9].words), box), pages[9], lambda: render_bgr(page, config.ocr.dpi, box),
            RapidOcrEngine(config.ocr.rapidocr), ReadingSettings("t", config.ocr.min_conf),
        )  # fmt: skip
    assert got["ocr_source"] == "rapidocr" and "stratégie" in got["ocr_text"]
    assert got["table_md"] is None
