"""Describe stage pieces on real crops and on small inputs: OCR, vector text, tables, offline
descriptions, prompts, the PaddleOCR mapping and the content cache."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from interleaf.describe.config import OcrConfig
from interleaf.describe.ocr_cache import CachedOcr
from interleaf.describe.offline_describer import OfflineDescriber, referring_sentences
from interleaf.describe.protocol import DescribeRequest
from interleaf.describe.reading import ReadingSettings, read_quotes
from interleaf.describe.stage import DictCache, describe_document
from interleaf.describe.table_structure import markdown_table
from interleaf.describe.vector_text import PageText, raster_share
from interleaf.evidence import contains_needle
from interleaf.pdf.glyphs import stand_ins
from interleaf.pdf.ocr.config import PaddleOcrConfig
from interleaf.pdf.ocr.paddleocr_engine import lines_from_result, paddle_kwargs
from interleaf.pdf.ocr.protocol import OcrLine
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import render_bgr
from interleaf.pdf.rows import rows_text
from interleaf.pdf.words import Word, ocr_words, text_layer_words, with_stand_ins, words_in_box
from interleaf.prompts import Prompt, PromptError, load_prompt
from interleaf.text.references import Label, caption_label

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def scanned_lines(corpus: Path) -> list[OcrLine]:
    engine = RapidOcrEngine(OcrConfig().rapidocr)
    with pymupdf.open(corpus / "docs" / "scanned-table.pdf") as doc:
        return engine.read(render_bgr(doc[0], 216))


def test_rapidocr_reads_a_scanned_table(scanned_lines: list[OcrLine]) -> None:
    text = "\n".join(line.text for line in scanned_lines)
    assert contains_needle([text], "260.57")
    assert contains_needle([text], "Chipper")
    assert all(0 < line.conf <= 1 for line in scanned_lines)


def _ocr_text(pdf: Path, page_idx: int, box: tuple[float, float, float, float], config: OcrConfig) -> str:
    with pymupdf.open(pdf) as doc:
        image = render_bgr(doc[page_idx], config.dpi, box)
    lines = RapidOcrEngine(config.rapidocr).read(image)
    return " ".join(line.text for line in lines if line.conf >= config.min_conf).casefold()


def test_rapidocr_reads_a_screen_capture_the_right_way_up(corpus: Path) -> None:
    """RapidOCR's orientation classifier, run on every line, turned lines of this terminal screen
    (the IRS manual's BMF entity screen, page 40) upside down before reading them ("O--1n", "T"
    where it prints EIN:nn-nnnnnnn and ENROLLMENT); the default checks vertical lines only."""
    text = _ocr_text(corpus / "scale" / "irs-manual-400p.pdf", 39, (83.0, 128.0, 491.0, 400.0), OcrConfig())
    for printed in ("PARENT EIN:nn-nnnnnnn ENROLLMENT", "BMF ENTITY MODULE", "FILING REQUIREMENT CODES", "CORP:n"):
        assert printed.casefold() in text, (printed, text)


def test_rapidocr_reads_a_charts_axis_titles_bottom_to_top(corpus: Path) -> None:
    """MAVIS's figure on page 7: its y-axis titles run bottom to top; unchecked, RapidOCR's quarter
    turn read them upside down ("MUV%)", "F1-o-(%)")."""
    text = _ocr_text(corpus / "docs" / "mavis-aaai2026.pdf", 6, (49.9, 55.6, 564.4, 179.5), OcrConfig())
    for printed in ("MAUVE (%)", "F1-score (%)", "Informativeness", "Multiple-query Retrieval"):
        assert printed.casefold() in text, (printed, text)


def test_table_from_ocr_boxes_keeps_rows_and_columns(scanned_lines: list[OcrLine]) -> None:
    # the page also holds paragraphs; the table crop spans the "Base 128" row to the "Chipper" row
    top = next(ln for ln in scanned_lines if ln.text.startswith("Base 128")).box[1] - 10
    bottom = next(ln for ln in scanned_lines if "Chipper" in ln.text).box[3] + 5
    table = [ln for ln in scanned_lines if top <= (ln.box[1] + ln.box[3]) / 2 <= bottom]
    md = markdown_table(ocr_words(table))
    assert md is not None
    rows = [r for r in md.splitlines() if not r.startswith("|---")]
    chipper = next(r for r in rows if "Chipper" in r)
    cells = [c.strip() for c in chipper.strip("|").split("|")]
    assert len(cells) >= 4  # name, chunks, mean chunks, tables: not one merged line
    assert "Chipper" in cells[0] and any("260.57" in c for c in cells[1:])


def test_table_from_text_layer_words(corpus: Path) -> None:
    """dpr-emnlp2020 page 4 has a vector table (Table 1: datasets with Train/Dev/Test)."""
    with pymupdf.open(corpus / "docs" / "dpr-emnlp2020.pdf") as doc:
        words, _ = text_layer_words(doc[3])
    header = next(w for w in words if w.text == "Dataset")
    box = (header.x0 - 2, header.y0 - 2, header.x0 + 250, header.y1 + 60)
    md = markdown_table(words_in_box(words, box))
    assert md is not None
    lines = md.splitlines()
    assert lines[0].split("|")[1].strip() == "Dataset"
    assert lines[1].count("---") >= 4
    assert any(line.startswith("| TriviaQA |") for line in lines)


def test_raster_share_sums_tiled_strips() -> None:
    strips = [(0.0, y, 100.0, y + 20.0) for y in range(0, 100, 20)]
    assert raster_share((0, 0, 100, 100), strips) == pytest.approx(1.0)
    assert raster_share((0, 0, 100, 100), strips[:1]) == pytest.approx(0.2)


def test_rows_text_reads_rows_top_down_left_right() -> None:
    words = [Word(50, 0, 70, 10, "b", 0, 0, 0), Word(0, 1, 20, 11, "a", 0, 0, 0), Word(0, 30, 20, 40, "c", 0, 0, 0)]
    assert rows_text(words) == "a b\nc"


def test_referring_sentences_name_the_captions_label() -> None:
    texts = ["We train on NQ. As shown in Table 2, DPR wins. Table 12 is different. See Fig. 2 too.", "Table 2: Scores"]
    assert referring_sentences(caption_label("Table 2. Scores"), texts, 3) == ["As shown in Table 2, DPR wins."]
    assert referring_sentences(Label("figure", "2"), texts, 3) == ["See Fig. 2 too."]
    assert referring_sentences(caption_label("Results of the study"), texts, 3) == []  # no label, no search


def test_offline_describer_says_what_it_is_built_from() -> None:
    request = DescribeRequest(
        "q", "table", 1, b"", "Table 2: Scores", "a b", "text_layer", "| a | b |\n|---|---|", ("DPR wins.",)
    )
    (desc,) = OfflineDescriber().describe([request])
    assert desc.text is not None and "Table on page 2." in desc.text
    assert "| a | b |" in desc.text and "DPR wins." in desc.text
    assert desc.sources == ("caption", "table_md", "references")
    assert "no vision model" in desc.text
    (empty,) = OfflineDescriber().describe([DescribeRequest("q", "figure", 0, b"")])
    assert empty.text is None and empty.error


def test_prompt_renders_strictly() -> None:
    prompt = load_prompt("describe_image")
    text = prompt.render(kind="chart", page=3, caption="Figure 1")
    assert "chart" in text and "legend" in text and "{{" not in text
    with pytest.raises(PromptError):
        prompt.render(kind="chart", page=3)
    with pytest.raises(PromptError):
        prompt.render(kind="chart", page=3, caption="x", extra=1)
    assert Prompt("p", "a {{ x }}").hash != Prompt("p", "b {{ x }}").hash


def test_paddleocr_configuration_and_result_mapping() -> None:
    kwargs = paddle_kwargs(PaddleOcrConfig(text_detection_model_dir="/m/det", text_recognition_model_dir="/m/rec"))
    assert kwargs["text_detection_model_dir"] == "/m/det" and kwargs["text_recognition_model_dir"] == "/m/rec"
    assert kwargs["use_doc_orientation_classify"] is False and kwargs["use_doc_unwarping"] is False
    assert "lang" not in kwargs  # unset options are left to PaddleOCR's defaults
    # PaddleOCR 3.x OCRResult.json["res"], trimmed to the keys the mapping reads
    result = {
        "res": {
            "input_path": None,
            "page_index": None,
            "dt_polys": [[[10, 5], [90, 5], [90, 20], [10, 20]], [[12, 30], [60, 30], [60, 44], [12, 44]]],
            "rec_texts": ["Chipper 20,843", "", "260.57"],
            "rec_scores": [0.98, 0.1, 0.91],
            "rec_polys": [
                [[10, 5], [90, 5], [90, 20], [10, 20]],
                [[0, 0], [1, 0], [1, 1], [0, 1]],
                [[12, 30], [60, 30], [60, 44], [12, 44]],
            ],
            "rec_boxes": [[10, 5, 90, 20], [0, 0, 1, 1], [12, 30, 60, 44]],
        }
    }

    class FakeResult:  # the object predict() yields exposes the dict as `.json`
        json = result

    for given in (result["res"], FakeResult()):
        lines = lines_from_result(given)
        assert [ln.text for ln in lines] == ["Chipper 20,843", "260.57"]
        assert lines[1].box == (12.0, 30.0, 60.0, 44.0) and lines[1].conf == pytest.approx(0.91)
    no_boxes = {k: v for k, v in result["res"].items() if k != "rec_boxes"}
    assert lines_from_result(no_boxes)[0].box == (10.0, 5.0, 90.0, 20.0)


class CountingOcr:
    name = "rapidocr"

    def __init__(self, lines: list[OcrLine]) -> None:
        self.lines, self.calls = lines, 0

    def fingerprint_config(self) -> dict:
        return {}

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        self.calls += 1
        return self.lines


def test_stage_caches_by_content_and_rejects_empty(scanned_lines: list[OcrLine]) -> None:
    quotes = [
        {
            "quote_id": "d-p0000-q000",
            "doc_id": "d",
            "page_idx": 0,
            "kind": "table",
            "bbox": [0, 0, 500, 300],
            "caption": None,
            "text": "",
        },
        {
            "quote_id": "d-p0000-q001",
            "doc_id": "d",
            "page_idx": 0,
            "kind": "figure",
            "bbox": [0, 400, 500, 600],
            "caption": None,
            "text": "",
        },
    ]
    pngs = {"d-p0000-q000": b"table-crop", "d-p0000-q001": b"photo-crop"}
    ocr = CountingOcr(scanned_lines)
    cache = DictCache()
    reading = ReadingSettings("ocr-fp")

    def run(images: dict[str, bytes], describer_fp: str, engine: CountingOcr = ocr):
        blank_page = lambda q: np.zeros((4, 4, 3), np.uint8)  # noqa: E731
        # as the stage sends them: the quotes with a stored crop, each with its crop's hash
        stored = [
            q | {"png_sha256": hashlib.sha256(images[q["quote_id"]]).hexdigest()}
            for q in quotes
            if q["quote_id"] in images
        ]
        readings = read_quotes(stored, {0: PageText((), ())}, blank_page, engine, reading, cache)
        out = describe_document(quotes, images, readings, OfflineDescriber(), describer_fp, cache, engine.name)
        return out, sum(r.fresh for r in readings.values())

    first, read = run(pngs, "offline-a")
    rows = {r["quote_id"]: r for r in first.quote_texts.to_pylist()}
    assert rows["d-p0000-q000"]["table_md"] and rows["d-p0000-q000"]["ocr_source"] == "rapidocr"
    assert read == 2 and ocr.calls == 2
    # same crops (as after a re-parse that yields identical PNGs), same describer: nothing recomputed
    again, read = run(dict(pngs), "offline-a")
    assert (read, again.described, ocr.calls) == (0, 0, 2)
    assert again.quote_texts.to_pylist() == first.quote_texts.to_pylist()
    # another describer: descriptions again, readings from the cache
    other, read = run(pngs, "offline-b")
    assert (read, other.described, ocr.calls) == (0, 2, 2)
    # a crop whose pixels hold no text: a reject row, the quote keeps its row
    blank = CountingOcr([])
    empty, _ = run({"d-p0000-q001": b"blank-crop"}, "offline-a", blank)
    assert empty.quote_texts.num_rows == 1 and empty.quote_texts.column("ocr_text")[0].as_py() is None
    reasons = [reason for qid, reason in empty.rejects if qid == "d-p0000-q001"]
    assert any(r.startswith("ocr: no text") for r in reasons) and any(
        r.startswith("describe (offline)") for r in reasons
    )


def test_glyph_readings_are_cached_by_their_pixels(corpus: Path) -> None:
    """The corrosion table's six signs with the font's answer withheld, read by OCR once: a second
    pass over the page with the same cache reads nothing and puts back the same words."""
    cache = DictCache()
    engine = RapidOcrEngine(OcrConfig().rapidocr)
    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        page = doc[0]
        textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)
        raw = [Word(*w) for w in page.get_text("words", textpage=textpage)]
        unnamed = [dataclasses.replace(g, char=None, source=None) for g in stand_ins(page, textpage)]
        first, again = CachedOcr(engine, cache), CachedOcr(engine, cache)
        read = with_stand_ins(page, raw, unnamed, first)
        reread = with_stand_ins(page, raw, unnamed, again)
    assert first.read_count >= 6 and again.read_count == 0
    assert reread == read
    assert sum(w.text[:1] == "\u2212" for w in reread) == 6  # the cached lines carry the signs OCR read
