"""The MinerU 2.x/3.x content-list importer, on a fixture written in the documented format and the
real first pages of the MAVIS paper (612 x 792 pt)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pymupdf
import pytest

from interleaf.errors import ConfigError, DocumentError
from interleaf.evidence import contains_needle
from interleaf.parse.config import ContentListConfig, ParseConfig
from interleaf.parse.mineru.common import html_table_text
from interleaf.parse.mineru.content_list import read_content_list
from interleaf.parse.mineru.content_list_parser import ContentListParser
from interleaf.parse.protocol import ParsedDocument
from interleaf.parse.registry import get_parser

os.environ.setdefault("HF_HUB_OFFLINE", "1")

FIXTURE = Path(__file__).parent / "fixtures" / "mineru_content_list"
JSON_PATH = FIXTURE / "paper_content_list.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PAGE_W, PAGE_H = 612.0, 792.0
CROP_DPI = ContentListConfig().crop_dpi


def read(path: Path, pdf: bytes | None = None) -> ParsedDocument:
    return read_content_list(path, pdf, crop_dpi=CROP_DPI)


@pytest.fixture(scope="module")
def mavis_pdf(corpus: Path) -> bytes:
    return (corpus / "docs" / "mavis-aaai2026.pdf").read_bytes()


@pytest.fixture(scope="module")
def items() -> list[dict]:
    return json.loads(JSON_PATH.read_text())


@pytest.fixture(scope="module")
def parsed(mavis_pdf: bytes) -> ParsedDocument:
    return read(JSON_PATH, mavis_pdf)


def quote_with(doc: ParsedDocument, kind: str, text_part: str = ""):
    found = [q for q in doc.quotes if q.kind == kind and text_part in q.text]
    assert found, f"no {kind} quote containing {text_part!r}"
    return found[0]


def test_kinds_in_reading_order(parsed: ParsedDocument) -> None:
    # The file's order is kept; the empty text item is dropped.
    assert [(q.page_idx, q.kind) for q in parsed.quotes] == [
        (0, "header"),
        (0, "title"),
        (0, "text"),
        (0, "title"),
        (0, "figure"),
        (0, "equation"),
        (0, "footer"),  # page_number in the bottom half
        (1, "table"),
        (1, "list"),
        (1, "code"),
        (1, "figure"),  # chart
        (1, "text"),  # aside_text
        (1, "text"),  # page_footnote
        (1, "footer"),
    ]
    assert all(q.text_source == ("mineru" if q.text else "none") for q in parsed.quotes)


def test_pages_come_from_the_pdf(parsed: ParsedDocument, mavis_pdf: bytes) -> None:
    with pymupdf.open(stream=mavis_pdf, filetype="pdf") as doc:
        assert parsed.page_count == doc.page_count == len(parsed.pages)
    first = parsed.pages[0]
    assert (first.width, first.height, first.rotation) == (PAGE_W, PAGE_H, 0)
    assert first.has_text_layer and not first.ocr_used
    assert [p.page_idx for p in parsed.pages] == list(range(parsed.page_count))


def test_bbox_scaled_from_thousandths_to_points(parsed: ParsedDocument, items: list[dict]) -> None:
    figure = quote_with(parsed, "figure", "")
    x0, y0, x1, y1 = next(it["bbox"] for it in items if it["type"] == "image")
    sx, sy = PAGE_W / 1000, PAGE_H / 1000
    assert figure.bbox == pytest.approx((x0 * sx, y0 * sy, x1 * sx, y1 * sy), abs=0.01)
    for q in parsed.quotes:
        assert 0 <= q.bbox[0] <= q.bbox[2] <= PAGE_W and 0 <= q.bbox[1] <= q.bbox[3] <= PAGE_H


def test_bbox_lands_on_the_real_text(parsed: ParsedDocument, mavis_pdf: bytes) -> None:
    """The title's box, copied from where MinerU found it, holds the title in the PDF's text."""
    title = quote_with(parsed, "title", "MAVIS")
    with pymupdf.open(stream=mavis_pdf, filetype="pdf") as doc:
        inside = doc[0].get_text(clip=pymupdf.Rect(title.bbox))
    assert "MAVIS: A Benchmark for Multimodal Source Attribution" in " ".join(inside.split())


def test_titles(parsed: ParsedDocument) -> None:
    assert quote_with(parsed, "title", "Introduction").text == "1 Introduction"
    # The PDF's metadata has no usable title; the level-1 title of the first page is the page's title.
    assert parsed.title is None
    assert parsed.page_title == "MAVIS: A Benchmark for Multimodal Source Attribution"


def test_captions_footnotes_and_html(parsed: ParsedDocument) -> None:
    figure = quote_with(parsed, "figure", "")
    assert figure.caption == "Figure 1: An example of\nmultimodal attribution."
    assert figure.footnote == "Photo: Reddit."
    assert figure.html is None

    table = quote_with(parsed, "table")
    assert table.html is not None and table.html.startswith("<table>")
    assert table.text == "Model\tF1\nQwen3-8B\t53.7\nT5 & co\t41.0"
    assert table.caption == "Table 2: Entailment models for verifying groundedness."
    assert table.footnote == "F1 on the dev set."
    # The corpus's matching rule sees a row's cells as one run of text.
    assert contains_needle([table.text, table.caption], "qwen3-8b 53.7")

    chart = quote_with(parsed, "figure", "MAUVE")
    assert chart.caption == "Figure 3: Fluency."
    code = quote_with(parsed, "code")
    assert code.text == "def score(a):\n    return 1"
    assert code.caption == "Listing 1: Scoring." and code.footnote is None
    assert quote_with(parsed, "list").text == "1. Completeness of the answer.\n2. Relevance to the question."
    assert quote_with(parsed, "equation").text == "$$\nc(g_j, A) = 1\n$$"


def test_furniture(parsed: ParsedDocument) -> None:
    furniture = {q.text: q.kind for q in parsed.quotes if q.furniture}
    assert furniture == {
        "Preprint. Under review.": "header",
        "1": "footer",
        "arXiv:2601.00001v1 [cs.CL]": "text",
        "AAAI 2026": "footer",
    }
    assert not quote_with(parsed, "text", "https://example.org").furniture  # a page footnote is content


def test_images_read_converted_or_cropped(parsed: ParsedDocument) -> None:
    figure = quote_with(parsed, "figure", "")
    assert figure.png == (FIXTURE / "images" / "fig1.png").read_bytes()
    equation = quote_with(parsed, "equation")
    assert equation.png is not None and equation.png.startswith(PNG_SIGNATURE)  # the JPEG, as PNG
    assert pymupdf.Pixmap(equation.png).width == 16
    # The table's image file is missing: it is cropped from the PDF at crop_dpi (144: twice 72 pt per inch).
    table = quote_with(parsed, "table")
    assert table.png is not None and table.png.startswith(PNG_SIGNATURE)
    pix = pymupdf.Pixmap(table.png)
    assert pix.width == pytest.approx((table.bbox[2] - table.bbox[0]) * 2, abs=2)
    assert pix.height == pytest.approx((table.bbox[3] - table.bbox[1]) * 2, abs=2)
    assert all(q.png is None for q in parsed.quotes if q.kind not in ("figure", "table", "equation"))


def test_without_pdf_boxes_stay_in_the_content_list_scale(items: list[dict], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="interleaf.parse.mineru.content_list"):
        doc = read(JSON_PATH)
    assert "no PDF given" in caplog.text and "0–1000" in caplog.text
    assert doc.page_count == 2
    assert all((p.width, p.height, p.has_text_layer) == (1000.0, 1000.0, False) for p in doc.pages)
    figure = quote_with(doc, "figure", "")
    assert figure.bbox == tuple(float(v) for v in next(it["bbox"] for it in items if it["type"] == "image"))
    assert figure.png == (FIXTURE / "images" / "fig1.png").read_bytes()
    assert quote_with(doc, "table").png is None  # no file and nothing to crop from
    assert doc.page_title == "MAVIS: A Benchmark for Multimodal Source Attribution"


def test_img_path_may_not_leave_the_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes((FIXTURE / "images" / "fig1.png").read_bytes())
    sub = tmp_path / "auto"
    sub.mkdir()
    path = sub / "x_content_list.json"
    item = {"type": "image", "img_path": "../secret.png", "bbox": [0, 0, 10, 10], "page_idx": 0}
    path.write_text(json.dumps([item]))
    assert read(path).quotes[0].png is None


BAD_FILES = [
    ("{not json", "not valid JSON"),
    ('{"pages": []}', "expected a JSON list of content items, got dict"),
    ("[1]", "item 0: expected an object, got int"),
    ('[{"page_idx": 0, "bbox": [0, 0, 1, 1]}]', "item 0: missing type"),
    ('[{"type": "text", "text": "a", "bbox": [0, 0, 1, 1]}]', "item 0 (text): missing page_idx"),
    ('[{"type": "text", "text": "a", "page_idx": -1, "bbox": [0, 0, 1, 1]}]', "page_idx must be an integer >= 0"),
    ('[{"type": "text", "text": "a", "page_idx": "0", "bbox": [0, 0, 1, 1]}]', "page_idx must be an integer >= 0"),
    ('[{"type": "text", "text": "a", "page_idx": 0}]', "item 0: no bbox"),
    ('[{"type": "text", "text": "a", "page_idx": 0, "bbox": [0, 0, 1]}]', "bbox must be four numbers"),
    ('[{"type": "text", "text": "a", "page_idx": 0, "bbox": [0, 0, 612, 1792]}]', "outside the 0–1000 page scale"),
    ('[{"type": "text", "text": "a", "page_idx": 0, "bbox": [50, 0, 10, 10]}]', "x1 < x0"),
    ('[{"type": "image", "image_caption": 5, "page_idx": 0, "bbox": [0, 0, 1, 1]}]', "image_caption must be a list"),
    ("[]", "no content items, and no PDF"),
]


@pytest.mark.parametrize(("content", "reason"), BAD_FILES)
def test_malformed_files_are_rejected_with_a_reason(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "bad_content_list.json"
    path.write_text(content)
    with pytest.raises(DocumentError) as err:
        read(path)
    assert reason in err.value.reason
    assert err.value.path == str(path) and str(path) in str(err.value)


def test_page_beyond_the_pdf(tmp_path: Path, mavis_pdf: bytes) -> None:
    path = tmp_path / "x_content_list.json"
    path.write_text(json.dumps([{"type": "text", "text": "a", "page_idx": 17, "bbox": [0, 0, 10, 10]}]))
    with pytest.raises(DocumentError, match="item 0: page_idx 17 but the PDF has 17 pages"):
        read(path, mavis_pdf)


def test_bad_pdf_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="the PDF given with it: not a PDF"):
        read(JSON_PATH, b"hello, not a pdf")
    with pytest.raises(DocumentError, match="cannot read the content list"):
        read(tmp_path / "absent.json")


def test_html_table_text_handles_spans_and_breaks() -> None:
    html = '<table><tr><td colspan="2">A<br>B</td></tr><tr><td> x  y </td><td>&lt;1</td></tr></table>'
    assert html_table_text(html) == "A B\nx y\t<1"


def test_crop_dpi_is_the_resolution_of_crops_from_the_pdf(mavis_pdf: bytes) -> None:
    table = quote_with(read_content_list(JSON_PATH, mavis_pdf, crop_dpi=72), "table")
    assert table.png is not None
    assert pymupdf.Pixmap(table.png).width == pytest.approx(table.bbox[2] - table.bbox[0], abs=2)


# -- the `content_list` parse backend --------------------------------------------------------------

MAVIS = "mavis-aaai2026"


def mineru_output(root: Path, stem: str = MAVIS) -> Path:
    """The fixture laid out as MinerU 2.x writes a document's output: <out>/<name>/auto/<name>_content_list.json."""
    auto = root / stem / "auto"
    auto.mkdir(parents=True)
    (auto / f"{stem}_content_list.json").write_bytes(JSON_PATH.read_bytes())
    (auto / "images").mkdir()
    for image in (FIXTURE / "images").iterdir():
        (auto / "images" / image.name).write_bytes(image.read_bytes())
    return root


def backend(folder: Path) -> ContentListParser:
    parser = get_parser(ParseConfig(backend="content_list", content_list=ContentListConfig(folder=str(folder))))
    assert isinstance(parser, ContentListParser) and parser.name == "content_list"
    return parser


def test_backend_reads_the_content_list_mineru_wrote_for_the_pdf(
    tmp_path: Path, mavis_pdf: bytes, parsed: ParsedDocument
) -> None:
    doc = backend(mineru_output(tmp_path / "out")).parse(mavis_pdf, f"{MAVIS}.pdf")
    assert doc == parsed  # the same document as the importer reads from the fixture's own folder
    assert quote_with(doc, "figure", "").png == (FIXTURE / "images" / "fig1.png").read_bytes()


def test_backend_rejects_a_pdf_without_exactly_one_content_list(tmp_path: Path, mavis_pdf: bytes) -> None:
    parser = backend(mineru_output(tmp_path / "out"))
    with pytest.raises(DocumentError, match=r"no other-paper_content_list\.json under .*parse\.content_list\.folder"):
        parser.parse(mavis_pdf, "other-paper.pdf")
    mineru_output(tmp_path / "out" / "again")  # a second run's output of the same document
    with pytest.raises(DocumentError, match=rf"2 files named {MAVIS}_content_list\.json .*keep one"):
        backend(tmp_path / "out").parse(mavis_pdf, f"{MAVIS}.pdf")


def test_backend_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"needs parse\.content_list\.folder"):
        get_parser(ParseConfig(backend="content_list"))
    with pytest.raises(ConfigError, match="is not a folder"):
        backend(tmp_path / "absent")


def test_backend_fingerprint_follows_the_content_lists(tmp_path: Path) -> None:
    folder = mineru_output(tmp_path / "out")
    first = backend(folder).fingerprint_config()
    assert backend(folder).fingerprint_config() == first  # nothing changed, nothing to re-parse
    path = folder / MAVIS / "auto" / f"{MAVIS}_content_list.json"
    items = json.loads(path.read_text())
    items[2]["text"] = "An edited paragraph."
    path.write_text(json.dumps(items))
    assert backend(folder).fingerprint_config()["content_lists"] != first["content_lists"]
