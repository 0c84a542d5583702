"""MineruParser with the real MinerU 4 (tier flash, offline on PDFs with a text layer) on real pages,
checked against what PyMuPDF reads from the same PDFs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from interleaf.errors import DocumentError
from interleaf.evidence import contains_needle
from interleaf.parse.config import MineruConfig, ParseConfig
from interleaf.parse.mineru.parser import MineruParser
from interleaf.parse.protocol import ParsedDocument
from interleaf.parse.registry import get_parser
from interleaf.parse.stage import ParseStage

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WORD = re.compile(r"[^\W_]{3,}")
REPO = Path(__file__).resolve().parent.parent


def words(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def grown(bbox: tuple[float, float, float, float], d: float) -> pymupdf.Rect:
    return pymupdf.Rect(bbox[0] - d, bbox[1] - d, bbox[2] + d, bbox[3] + d)


@pytest.fixture(scope="module")
def parser() -> MineruParser:
    return MineruParser(MineruConfig(tier="flash"))


@pytest.fixture(scope="module")
def table_page(corpus: Path) -> bytes:
    return (corpus / "docs" / "layoutparser-table-page.pdf").read_bytes()


@pytest.fixture(scope="module")
def table_doc(parser: MineruParser, table_page: bytes) -> ParsedDocument:
    return parser.parse(table_page, "layoutparser-table-page.pdf")


def test_registry_builds_it_and_fingerprints_mineru_version(parser: MineruParser) -> None:
    built = get_parser(ParseConfig(backend="mineru"))
    assert isinstance(built, MineruParser) and built.name == "mineru"
    assert built.fingerprint_config() == {"tier": "flash", "ocr_mode": "auto", "image_analysis": False, "crop_dpi": 144}
    # the release of MinerU it runs is part of the parse stage's fingerprint
    version = ParseStage(ParseConfig(backend="mineru")).version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version["mineru"]), version


def test_pages(table_doc: ParsedDocument, table_page: bytes) -> None:
    assert table_doc.page_count == 1 and not table_doc.page_rejects
    page = table_doc.pages[0]
    assert (page.page_idx, page.width, page.height, page.rotation) == (0, 612.0, 792.0, 0)
    assert page.has_text_layer and not page.ocr_used


def test_text_quotes_hold_the_words_printed_in_their_box(table_doc: ParsedDocument, table_page: bytes) -> None:
    with pymupdf.open(stream=table_page, filetype="pdf") as doc:
        page = doc[0]
        page_words = set(words(page.get_text()))
        total = found_in_box = 0
        for q in table_doc.quotes:
            tokens = words(q.text)
            if q.kind not in ("text", "title") or not tokens:
                continue
            assert q.text_source == "mineru"
            in_box = set(words(page.get_text(clip=grown(q.bbox, 2))))
            share = sum(t in in_box for t in tokens) / len(tokens)
            assert share >= 0.75, f"{q.text[:60]!r}: only {share:.0%} of its words are inside its box"
            assert sum(t in page_words for t in tokens) / len(tokens) >= 0.75
            total += len(tokens)
            found_in_box += sum(t in in_box for t in tokens)
    assert found_in_box / total >= 0.95


def test_nothing_on_the_page_is_lost(table_doc: ParsedDocument, table_page: bytes) -> None:
    with pymupdf.open(stream=table_page, filetype="pdf") as doc:
        page_words = set(words(doc[0].get_text()))
    quoted = set()
    for q in table_doc.quotes:
        quoted.update(words(" ".join(t for t in (q.text, q.caption, q.footnote) if t)))
    assert len(page_words) > 150
    assert len(page_words & quoted) / len(page_words) >= 0.95


def test_reading_order(table_doc: ParsedDocument) -> None:
    texts = [q.text for q in table_doc.quotes]

    def position(prefix: str) -> int:
        return next(i for i, t in enumerate(texts) if t.startswith(prefix))

    assert position("Dataset") < position("layout data structures") < position("3.1 Layout Detection Models")
    assert position("3.1 Layout Detection Models") < position("In LayoutParser, a layout model")
    assert [q.kind for q in table_doc.quotes if q.text == "3.1 Layout Detection Models"] == ["title"]


def test_table_with_html_caption_footnote_and_crop(table_doc: ParsedDocument) -> None:
    (table,) = [q for q in table_doc.quotes if q.kind == "table"]
    assert table.html is not None and table.html.startswith("<table>") and "<td>TableBank [18]</td>" in table.html
    assert contains_needle([table.text], "TableBank [18]") and contains_needle([table.text], "F / M")
    assert table.text.splitlines()[0].split("\t")[0] == "Dataset"  # a row per line, cells by tabs
    assert table.caption == "Table 1: Current layout detection models in the LayoutParser model zoo"
    assert table.footnote is not None and "ResNet 101" in table.footnote
    assert table.png is not None and table.png.startswith(PNG_SIGNATURE)
    pix = pymupdf.Pixmap(table.png)  # decodes, at ~144 dpi
    assert pix.width == pytest.approx((table.bbox[2] - table.bbox[0]) * 2, abs=2)
    assert pix.height == pytest.approx((table.bbox[3] - table.bbox[1]) * 2, abs=2)


def test_crop_dpi_sets_the_crops_resolution(table_page: bytes) -> None:
    doc = MineruParser(MineruConfig(tier="flash", crop_dpi=72)).parse(table_page, "layoutparser-table-page.pdf")
    (table,) = [q for q in doc.quotes if q.kind == "table"]
    assert table.png is not None
    assert pymupdf.Pixmap(table.png).width == pytest.approx(table.bbox[2] - table.bbox[0], abs=2)  # 1 px per pt


def test_boxes_within_the_page_and_crops_only_for_images(table_doc: ParsedDocument) -> None:
    for q in table_doc.quotes:
        x0, y0, x1, y1 = q.bbox
        assert 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792
        assert (q.png is not None) == (q.kind in ("figure", "table", "equation"))


def test_figures_with_captions_and_page_numbers(parser: MineruParser, corpus: Path) -> None:
    pdf = (corpus / "docs" / "figures-example.pdf").read_bytes()
    doc = parser.parse(pdf, "figures-example.pdf")
    figures = [q for q in doc.quotes if q.kind == "figure"]
    assert [(q.page_idx, q.caption) for q in figures] == [
        (0, "Figure 1: This is an example image."),
        (1, "Figure 2: This is an example image."),
    ]
    with pymupdf.open(stream=pdf, filetype="pdf") as pdf_doc:
        for q in figures:
            assert q.png is not None and pymupdf.Pixmap(q.png).width > 100
            # The figure's box holds the drawing MinerU found, not the caption below it.
            (image_box,) = [pymupdf.Rect(info["bbox"]) for info in pdf_doc[q.page_idx].get_image_info()]
            assert grown(q.bbox, 2).contains(image_box)
    page_numbers = [(q.page_idx, q.kind, q.text) for q in doc.quotes if q.furniture]
    assert page_numbers == [(0, "footer", "1"), (1, "footer", "2")]


def test_rotated_page_boxes_are_in_unrotated_points(parser: MineruParser, corpus: Path) -> None:
    """MinerU measures the page as displayed; quotes use the unrotated frame, as the layout
    parser and PyMuPDF's words do."""
    pdf = (corpus / "bad" / "rotated-page-90.pdf").read_bytes()
    doc = parser.parse(pdf, "rotated-page-90.pdf")
    page = doc.pages[0]
    assert (page.rotation, page.width, page.height) == (90, pytest.approx(595.28), pytest.approx(841.89))
    with pymupdf.open(stream=pdf, filetype="pdf") as pdf_doc:
        blocks = {" ".join(b[4].split()): b[:4] for b in pdf_doc[0].get_text("blocks")}
    assert {q.text for q in doc.quotes} == set(blocks)
    for q in doc.quotes:
        assert q.bbox == pytest.approx(blocks[q.text], abs=3)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("empty.pdf", "empty file"), ("text-renamed.pdf", "not a PDF"), ("password.pdf", "encrypted")],
)
def test_bad_input_is_rejected_before_mineru_runs(parser: MineruParser, corpus: Path, name: str, reason: str) -> None:
    with pytest.raises(DocumentError, match=reason):
        parser.parse((corpus / "bad" / name).read_bytes(), name)


def test_importing_the_module_does_not_import_mineru() -> None:
    code = "import sys, interleaf.parse.mineru.parser; sys.exit('mineru' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env).returncode == 0
