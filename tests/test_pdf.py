"""interleaf.pdf on its own: rows of positioned text, renders, and the OCR engine's contract (what
it refuses, and thin strips that once asked for gigabytes)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from interleaf.pdf.ocr.config import RapidOcrConfig
from interleaf.pdf.ocr.images import pad_to_aspect
from interleaf.pdf.ocr.protocol import OcrError
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import crop_png, render_bgr
from interleaf.pdf.rows import group_rows, rows_text
from interleaf.pdf.words import Word, text_layer_words, words_in_box
from tests.conftest import CORPUS


def word(x0: float, y0: float, x1: float, y1: float, text: str) -> Word:
    return Word(x0, y0, x1, y1, text, 0, 0, 0)


def test_rows_read_top_down_left_right() -> None:
    words = [word(50, 0, 70, 10, "b"), word(0, 1, 20, 11, "a"), word(0, 30, 20, 40, "c")]
    assert rows_text(words) == "a b\nc"


def test_a_rotated_axis_title_does_not_swallow_the_tick_labels_beside_it() -> None:
    """A chart's y-axis: "accuracy" set vertically (a box 10 wide, 100 tall) beside ticks 70, 60, 50
    stacked 30 pt apart. Median height 10, so a row takes centres within 5 pt of its mean."""
    axis = word(0, 0, 10, 100, "accuracy")  # centre 50
    ticks = [word(15, 10, 30, 20, "70"), word(15, 40, 30, 50, "60"), word(15, 70, 30, 80, "50")]  # centres 15, 45, 75
    assert rows_text([axis, *ticks]) == "70\naccuracy 60\n50"  # |50 - 45| = 5: the title joins one tick only


def test_a_superscript_and_a_larger_word_stay_in_their_line() -> None:
    line = [word(0, 100, 20, 110, "area"), word(22, 97, 26, 104, "2"), word(30, 98, 60, 112, "BIG")]
    nxt = [word(0, 114, 20, 124, "next")]
    assert [[w.text for w in row] for row in group_rows(line + nxt)] == [["area", "2", "BIG"], ["next"]]


def test_words_in_box_take_the_words_whose_centre_is_inside() -> None:
    words = [word(0, 0, 10, 10, "in"), word(95, 0, 110, 10, "edge"), word(0, 20, 10, 30, "out")]
    assert [w.text for w in words_in_box(words, (0, 0, 100, 12))] == ["in"]  # "edge" centres at x 102.5 > 101
    assert [w.text for w in words_in_box(words, (0, 0, 102, 12))] == ["in", "edge"]


@pytest.fixture(scope="module")
def figures_pdf(corpus: Path) -> pymupdf.Document:
    return pymupdf.open(corpus / "docs" / "figures-example.pdf")


def test_render_and_crop_sizes_follow_the_dpi(figures_pdf: pymupdf.Document) -> None:
    page = figures_pdf[0]
    box = (100.0, 100.0, 244.0, 172.0)  # 144 x 72 pt
    assert render_bgr(page, 144, box).shape == (144, 288, 3)  # 2 px per pt
    assert pymupdf.Pixmap(crop_png(page, box, 72)).width == 144
    outside = (page.rect.width + 10, 0.0, page.rect.width + 50, 40.0)
    assert render_bgr(page, 144, outside).shape == (0, 0, 3) and crop_png(page, outside, 144) is None


@pytest.fixture(scope="module")
def engine() -> RapidOcrEngine:
    return RapidOcrEngine(RapidOcrConfig(threads=1))


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        (np.zeros((0, 0, 3), np.uint8), "empty image"),  # RapidOCR itself divides by zero on this
        (np.zeros((20, 30), np.uint8), "shape"),
        (np.zeros((20, 30, 3), np.float32), "8-bit"),
    ],
)
def test_ocr_refuses_what_it_cannot_read_with_ocr_error(engine: RapidOcrEngine, image: np.ndarray, reason: str) -> None:
    with pytest.raises(OcrError, match=reason):
        engine.read(image)


def test_pad_to_aspect_adds_white_below_or_right_and_keeps_the_pixels() -> None:
    strip = np.zeros((6, 1800, 3), np.uint8)
    padded = pad_to_aspect(strip, 16)
    assert padded.shape == (113, 1800, 3)  # 1800 / 16 = 112.5 rows: 107 white rows under the 6
    assert (padded[:6] == 0).all() and (padded[6:] == 255).all()
    assert pad_to_aspect(np.zeros((1800, 6, 3), np.uint8), 16).shape == (1800, 113, 3)
    square = np.zeros((50, 60, 3), np.uint8)
    assert pad_to_aspect(square, 16) is square


def test_ocr_reads_a_one_line_strip_in_bounded_memory(engine: RapidOcrEngine, figures_pdf: pymupdf.Document) -> None:
    """A caption line cropped tight is a strip of ~30:1; RapidOCR scales its short side up to 736 px,
    so unpadded a 2 x 2000 strip asked for 2.5 GB (measured). Padded, both read in bounded memory."""
    page = figures_pdf[0]
    words, _ = text_layer_words(page)
    caption = [w for w in words if w.text in ("Figure", "1:", "This", "is", "an", "example", "image.")]
    box = (
        min(w.x0 for w in caption),
        min(w.y0 for w in caption),
        max(w.x1 for w in caption),
        max(w.y1 for w in caption),
    )
    strip = render_bgr(page, 216, box)
    assert strip.shape[1] > 16 * strip.shape[0]  # a strip the engine pads
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    text = " ".join(line.text for line in engine.read(strip))
    assert "example image" in text.replace("  ", " ")
    thin = np.full((2, 2000, 3), 255, np.uint8)
    thin[:, ::9] = 0
    engine.read(thin)  # whatever it reads in a 2-px line, it must come back
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 600 and time.perf_counter() - started < 60


def test_the_detector_sees_a_large_image_at_most_det_max_side_and_a_small_one_as_rapidocr_sizes_it() -> None:
    """describe.ocr.rapidocr.det_max_side: the detector's input, not the image the lines are read
    from. RapidOCR scales the short side up to 736 px; a page-sized crop at 216 dpi (1,638 x 2,011
    px) went to the detector whole, and a wide strip came out longer still."""
    from interleaf.pdf.ocr.rapidocr_engine import detector_bound

    bounded = detector_bound(1, 1280).text_det.get_preprocess()
    own = detector_bound(1, None).text_det.get_preprocess()
    page_sized, strip, small = (np.full((h, w, 3), 255, np.uint8) for h, w in ((2011, 1638), (300, 1500), (200, 300)))
    assert own(page_sized).shape[2:] == (2016, 1632) and bounded(page_sized).shape[2:] == (1280, 1056)
    assert own(strip).shape[2:] == (736, 3680) and bounded(strip).shape[2:] == (256, 1280)
    assert bounded(small).shape == own(small).shape  # 736 x 1104: within the bound, as RapidOCR has it


def test_rapidocr_sessions_plan_no_memory_pattern_and_only_the_detector_goes_without_layout_copies() -> None:
    """Every image and line has its own shape, so a memory pattern (planned for one shape, one block
    for all of a run's activations) only added to each read's peak, as did the blocked-channel copies
    of ORT_ENABLE_ALL on the detector's whole images; the recognizer's and classifier's 48 px lines
    keep them (faster, and their copies are small). RapidOCR builds its sessions at their first use:
    all three must be built under the patch, and the patch undone after."""
    import onnxruntime as ort
    from rapidocr.inference_engine.onnxruntime import main as onnxruntime_engine

    from interleaf.pdf.ocr.rapidocr_engine import rapidocr_engine

    engine = rapidocr_engine(1)
    parts = {"det": engine.text_det, "rec": engine.text_rec, "cls": engine.text_cls}
    options = {name: part.session.session.get_session_options() for name, part in parts.items()}
    assert all(o.enable_mem_pattern is False for o in options.values())
    levels = {name: o.graph_optimization_level for name, o in options.items()}
    assert levels == {
        "det": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "rec": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "cls": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }
    assert onnxruntime_engine.OrtInferSession._init_sess_opts.__name__ == "_init_sess_opts"


def test_pymupdfs_layout_model_loads_only_when_a_layout_is_asked_for() -> None:
    """pymupdf 2.0 loads the ONNX model of its optional layout analyzer when it is imported; Interleaf
    never asks for a layout, so after interleaf the model waits for the first `find_tables()` or
    `get_layout()`, which then give what they give without interleaf. Each order runs in a fresh
    interpreter, since a process imports pymupdf once."""
    probe = (
        "import json, sys\n"
        "if sys.argv[1] == 'interleaf first': import interleaf\n"
        "import pymupdf\n"
        "loaded = lambda: 'pymupdf.layout.DocumentLayoutAnalyzer' in sys.modules\n"
        f"doc = pymupdf.open({str(CORPUS / 'docs' / 'mavis-aaai2026.pdf')!r})\n"
        "at_import, words = loaded(), len(doc[0].get_text('words'))\n"
        "tables = [t.to_markdown() for t in doc[3].find_tables().tables]\n"
        "print(json.dumps([at_import, words, tables, loaded()]))\n"
    )
    alone, after = (
        json.loads(
            subprocess.run([sys.executable, "-c", probe, order], capture_output=True, text=True, check=True).stdout
        )
        for order in ("pymupdf alone", "interleaf first")
    )
    assert alone[0] is True and after[0] is False  # installed, the model loads with pymupdf: not after interleaf
    assert after[1] == alone[1] > 500  # the page's words
    assert after[2] == alone[2] and "NLIDeBERTaV3" in after[2][0]  # the layout-guided table, found all the same
    assert after[3] is True


def test_det_max_side_is_a_size_or_null(tmp_path: Path) -> None:
    from interleaf.config import load_settings
    from interleaf.errors import ConfigError

    assert (
        load_settings(overrides=["describe.ocr.rapidocr.det_max_side=null"]).describe.ocr.rapidocr.det_max_side is None
    )
    with pytest.raises(ConfigError, match="det_max_side"):
        load_settings(overrides=["describe.ocr.rapidocr.det_max_side=10"])
