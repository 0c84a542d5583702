"""Describe's table Markdown keeps what the printed table means, on the corpus's real pages: signs
the text layer writes as control characters (corrosion-plot-table.pdf), row-group labels printed
once beside their rows and headers spanning columns (DPR Table 2), ruled scanned tables."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pymupdf
import pytest
from conftest import run_cli, sql_rows

from interleaf.describe.config import DescribeConfig
from interleaf.describe.reading import ReadingSettings, page_texts, read_quote
from interleaf.describe.table_structure import markdown_table
from interleaf.pdf.glyphs import stand_ins
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import render_bgr
from interleaf.pdf.rules import vector_rules
from interleaf.pdf.words import Word, text_layer_words, with_stand_ins, words_in_box

MINUS = "\u2212"


def table(md: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of ONE Markdown pipe table with ONE header row."""
    lines = md.splitlines()
    assert len(lines) >= 3 and set(lines[1].replace("|", "")) == {"-"}, md
    cells = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]
    header, body = cells[0], cells[2:]
    assert all(len(row) == len(header) for row in body), md
    assert not any(set(line.replace("|", "").strip()) == {"-"} for line in lines[2:]), "a second header row"
    return header, body


def column(md: str, name: str) -> list[str]:
    header, body = table(md)
    return [row[header.index(name)] for row in body]


# --- signs ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corrosion_warehouse(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The one-page corrosion PDF ingested through the real CLI (parse, describe, index)."""
    root = tmp_path_factory.mktemp("corrosion") / "warehouse"
    run_cli(root, "ingest", str(corpus / "docs" / "corrosion-plot-table.pdf"))
    return root


def test_ecorr_keeps_its_minus_signs_in_the_stored_table_markdown(corrosion_warehouse: Path) -> None:
    rows = sql_rows(
        corrosion_warehouse,
        "select t.table_md, t.ocr_text, q.text from quote_texts t join quotes q using (quote_id) "
        "where t.kind = 'table'",
    )
    assert len(rows) == 1
    ecorr = column(rows[0]["table_md"], "Ecorr (V)")
    # the page prints every corrosion potential negative (−0.9393 ... −0.5356)
    assert len(ecorr) == 6 and all(v.startswith(MINUS) and float(v[1:]) > 0 for v in ecorr), ecorr
    # the same words feed OCR-text and the parse's quote text
    for value in ecorr:
        assert value in rows[0]["ocr_text"] and value in rows[0]["text"]


def test_the_corrosion_minus_comes_from_the_glyph_name_in_the_fonts_encoding(corpus: Path) -> None:
    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        page = doc[0]
        glyphs = stand_ins(page, page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS))
    assert len(glyphs) == 6
    # code 3 of AdvMacMthSyN, named /C0 by its /Differences: TeX's OMS position 0, the minus sign
    assert {(g.code, g.font, g.char, g.source) for g in glyphs} == {(3, "AdvMacMthSyN", MINUS, "tex-position")}


def test_ocr_reads_the_sign_where_the_font_does_not_name_the_glyph(corpus: Path) -> None:
    """The fallback path, on the same page with the font's answer withheld."""
    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        page = doc[0]
        textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)
        raw = [Word(*w) for w in page.get_text("words", textpage=textpage)]
        unnamed = [dataclasses.replace(g, char=None, source=None) for g in stand_ins(page, textpage)]
        read = with_stand_ins(page, raw, unnamed, RapidOcrEngine(DescribeConfig().ocr.rapidocr))
        blind = with_stand_ins(page, raw, unnamed, None)
    signed = [w.text for w in read if w.text[:1] == MINUS]
    assert len(signed) == 6 and all(w[1:2] == "0" for w in signed), signed
    # with neither the font nor OCR, the word says that something stood there
    assert sum(w.text.startswith("\ufffd0.") for w in blind) == 6


class CountingOcr:
    """An OCR engine that counts what it was asked to read."""

    name = "rapidocr"

    def __init__(self) -> None:
        self.engine, self.reads = RapidOcrEngine(DescribeConfig().ocr.rapidocr), 0

    def fingerprint_config(self) -> dict:
        return self.engine.fingerprint_config()

    def read(self, image):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.engine.read(image)


def test_a_glyph_touching_no_word_is_not_read_by_ocr(corpus: Path) -> None:
    """The Redpaper's list bullets (a private font's code 2, drawn as a triangle): nothing known
    beside them checks a reading. Each read took 1.2-2.1 s and none placed its glyph; without
    RapidOCR's upscaling they read as "▲" or "A"."""
    with pymupdf.open(corpus / "docs" / "ibm-redpaper-rcac.pdf") as doc:
        page = doc[4]
        textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)
        raw = [Word(*w) for w in page.get_text("words", textpage=textpage)]
        glyphs = stand_ins(page, textpage)
        assert len(glyphs) == 3 and all(g.char is None for g in glyphs)
        ocr = CountingOcr()
        read = with_stand_ins(page, raw, glyphs, ocr)
        blind = with_stand_ins(page, raw, glyphs, None)
    assert ocr.reads == 0 and read == blind


def test_check_marks_come_from_the_encoding_built_into_a_type1_font(corpus: Path) -> None:
    """DPR Table 3's IB column: ✗ and ✓ from a Dingbats subset whose program encodes them."""
    with pymupdf.open(corpus / "docs" / "dpr-emnlp2020.pdf") as doc:
        page = doc[5]
        words, _ = text_layer_words(page)
        header = next(w for w in words if w.text == "IB")
        marks = [w.text for w in words if abs(w.cx - header.cx) < 4 and w.cy > header.cy]
    assert marks.count("✗") == 3 and marks.count("✓") == 6


# --- structure --------------------------------------------------------------------------------------


def _dpr_table2_md(corpus: Path) -> str:
    """Table 2 of DPR (page 5) read as the describe stage reads a vector table: its words and its
    ruling lines inside the table's box (the box from its top rule to the line above the caption)."""
    with pymupdf.open(corpus / "docs" / "dpr-emnlp2020.pdf") as doc:
        idx = 4
        pages = page_texts(doc, {}, {idx}, None, {idx})
        words = pages[idx].words
        head = next(
            w
            for w in words
            if w.text == "Training" and any(v.text == "Retriever" and abs(v.cy - w.cy) < 2 for v in words)
        )
        caption = min((w for w in words if w.text == "Table" and w.y0 > head.y1), key=lambda w: w.y0)
        box = (head.x0 - 5, head.y0 - 4, 530.0, caption.y0 - 2)
        quote = {"kind": "table", "bbox": list(box)}
        inside = words_in_box(list(words), box)
        got = read_quote(quote, inside, pages[idx], lambda: render_bgr(doc[idx], 72), None, ReadingSettings("t"))  # type: ignore[arg-type]
    assert got["table_source"] == "text_layer"
    return got["table_md"]


def test_a_row_group_label_printed_once_beside_two_rows_is_on_both(corpus: Path) -> None:
    header, body = table(_dpr_table2_md(corpus))
    training, retriever = header.index("Training"), header.index("Retriever")
    labelled = [(row[training], row[retriever]) for row in body]
    assert labelled == [
        ("None", "BM25"),
        ("Single", "DPR"),
        ("Single", "BM25 + DPR"),
        ("Multi", "DPR"),
        ("Multi", "BM25 + DPR"),
    ]


def test_a_header_spanning_columns_is_joined_to_each_sub_header(corpus: Path) -> None:
    md = _dpr_table2_md(corpus)
    header, body = table(md)
    datasets = ["NQ", "TriviaQA", "WQ", "TREC", "SQuAD"]
    assert header[2:] == [f"{k} · {d}" for k in ("Top-20", "Top-100") for d in datasets]
    multi_dpr = next(row for row in body if row[:2] == ["Multi", "DPR"])
    # "DPR trained on multiple datasets reaches 93.9 Top-100 accuracy on TREC" (issue 15)
    assert multi_dpr[header.index("Top-100 · TREC")] == "93.9"


def test_a_header_wrapped_over_two_lines_is_one_cell(corpus: Path) -> None:
    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        page = doc[0]
        words, _ = text_layer_words(page)
        head = next(w for w in words if w.text == "Inhibitor")
        last = max((w for w in words if w.text == "0.0919"), key=lambda w: w.y1)
        box = (head.x0 - 3, head.y0 - 3, page.rect.width - 30, last.y1 + 3)
        md = markdown_table(words_in_box(words, box), rules=vector_rules(page).inside(box))
    header, body = table(md or "")
    assert "Inhibitor concentration (g)" in header and "Polarization resistance (Ω)" in header
    assert len(body) == 6


def test_a_ruled_scan_keeps_its_spanning_header_and_multi_line_cells(corpus: Path) -> None:
    """scanned-table-multirow.pdf: no text layer; OCR boxes and the grid's pixels."""
    config = DescribeConfig()
    with pymupdf.open(corpus / "docs" / "scanned-table-multirow.pdf") as doc:
        page = doc[0]
        box = tuple(page.rect)
        quote = {"kind": "table", "bbox": list(box)}
        engine = RapidOcrEngine(config.ocr.rapidocr)
        got = read_quote(
            quote, [], page_texts(doc, {0: {"ocr_used": True}}, {0})[0], lambda: render_bgr(page, config.ocr.dpi, box),
            engine, ReadingSettings("t", config.ocr.min_conf),
        )  # fmt: skip
    header, body = table(got["table_md"])
    assert [h for h in header if h.startswith("Results · ")] == ["Results · Accuracy", "Results · Time to complete"]
    low_vision = next(row for row in body if row[0] == "Low Vision")
    assert "(97.7%, n=3)" in low_vision[header.index("Results · Accuracy")]
    assert len(body) == 4  # Blind, Low Vision, Dexterity, Mobility: the second line of Low Vision is no row


def _stored_quote_reading(pdf: Path, idx: int, kind: str, box: tuple[float, float, float, float]) -> dict:
    """A quote read as describe reads it (text layer here), its box as the layout model gave it."""
    with pymupdf.open(pdf) as doc:
        pages = page_texts(doc, {}, {idx}, None, {idx})
        inside = words_in_box(list(pages[idx].words), box)
        quote = {"kind": kind, "bbox": list(box)}
        return read_quote(quote, inside, pages[idx], lambda: render_bgr(doc[idx], 72), None, ReadingSettings("t"))  # type: ignore[arg-type]


def test_a_table_whose_box_left_out_its_header_keeps_its_columns_and_row_groups(corpus: Path) -> None:
    """MAVIS Table 3: the layout box starts below the header row, and three group headings
    ("Fine-tuned on WebQA ...") printed across the table covered the column gaps: every cell was
    one column, with no header."""
    got = _stored_quote_reading(corpus / "docs" / "mavis-aaai2026.pdf", 4, "table", (316.3, 69.4, 561.3, 239.7))
    header, body = table(got["table_md"])
    assert header == ["Retriever", "NDCG@10", "Recall@100"]
    rows = {row[0]: row[1:] for row in body}
    assert rows["Fine-tuned on WebQA (Chang et al. 2022) · CLIP-DPR"] == ["0.1567", "0.4355"]
    assert rows["Fine-tuned on ClueWeb (Overwijk et al. 2022) · MARVEL-ANCE"] == ["0.1460", "0.4398"]
    assert all(" · " in r for r in rows), "a group's heading is on its rows, not a row of its own"


def test_a_ruled_row_whose_cells_wrap_is_one_row(corpus: Path) -> None:
    """The Korean report's Table 1: rules between the rows, each row's label and cells wrapped onto
    several lines, the label's lines between the cells' ones."""
    got = _stored_quote_reading(corpus / "docs" / "covid-report-ko.pdf", 1, "table", (58.8, 341.4, 298.2, 519.6))
    _header, body = table(got["table_md"])
    assert [row[0] for row in body] == ["분류 기준", "대상 질병", "U코드◦"]
    assert body[1][1] == "◦ (6종) 콜레라, 장티푸스, 파라 티푸스, 세균성이질, 장출혈 성대장균감염증, A형간염"
