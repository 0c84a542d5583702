"""Shapes of the OCR engines' settings (the describe stage's `describe.ocr.<engine>` sections)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from interleaf.strict import Strict


class RapidOcrConfig(Strict):
    # ONNX Runtime threads of each RapidOCR read, in each page worker (describe's readings run there).
    # Measured on 2 cores, the 400-page manual's ingest on 2 page workers: describe 235 s with 1
    # thread, 335 s with 2 (the same readings); RapidOCR's own default (-1: every core) is worse still.
    threads: int = Field(1, ge=1, le=64)
    # The text detector sees the image at most this many pixels on its longer side (null: RapidOCR's
    # own sizing, which scales the short side up to 736 px however long that makes the other);
    # recognition still reads each line from the full-resolution image. The detector's activations
    # grow with its input, ~150-250 MB a megapixel, and they set a page worker's peak.
    # benchmarks/bench_ocr.py (`make bench`), 6 lines a batch, RapidOCR's sizing -> 1280:
    # word recall against the text layer of 40 crops 0.921 -> 0.939, OCR CPU 180 -> 153 s, largest
    # read +926 -> +895 MB; with 1 line a batch, 1024 instead of 1280 kept 90% of the words 1280
    # reads on 52 raster crops (every dev-set needle still read) for 11% less CPU.
    det_max_side: int | None = Field(1280, ge=64)
    # Which detected lines RapidOCR's orientation classifier (its `use_cls`) checks, turning a line
    # 180 degrees first when it calls it upside down. "vertical": the lines RapidOCR turns a quarter
    # turn to read (1.5 times as tall as wide), whose reading direction that turn only guesses: a
    # chart's axis title reads bottom to top (a percent axis title of a corpus paper's figure read as
    # a clipped fragment unchecked). "all", RapidOCR's own default, misfires on the corpus's screen
    # captures: on 12 raster figures of the IRS manual, 8 read differently, and the words only it read
    # were flipped fragments ("O--1n", "T") where unchecked lines read whole words and field codes.
    # "off": none. benchmarks/bench_ocr.py (`make bench`) gives all three. Parse's OCR of whole
    # pages checks every line: a page may be scanned upside down (interleaf/parse/layout/parser.py).
    textline_orientation: Literal["vertical", "all", "off"] = "vertical"


class PaddleOcrConfig(Strict):
    """PaddleOCR 3.x with local model folders (it cannot fetch models on machines without a hub)."""

    text_detection_model_dir: str | None = None
    text_detection_model_name: str | None = None
    text_recognition_model_dir: str | None = None
    text_recognition_model_name: str | None = None
    textline_orientation_model_dir: str | None = None
    use_textline_orientation: bool = False
    lang: str | None = None
    device: str = "cpu"
