"""Rendering answers (Markdown, HTML page and report, terminal) on quotes cut from a real corpus PDF:
mavis-aaai2026.pdf page 4, whose Table 2 is cropped with PyMuPDF as the parser would."""

from __future__ import annotations

import base64
import io
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pymupdf
import pytest
from conftest import CORPUS
from PIL import Image
from rich.console import Console

from interleaf.generate.protocol import CheckedAnswer, CheckedSentence, Citation, ContextQuote
from interleaf.render import (
    AnswerView,
    PdfPages,
    render_answer_page,
    render_markdown,
    render_page,
    render_report,
    render_terminal,
)
from interleaf.render.marking import mark_answer

MAVIS = CORPUS / "docs" / "mavis-aaai2026.pdf"
ROTATED = CORPUS / "bad" / "rotated-page-90.pdf"
PAGE = 3  # 0-based: the paper's page 4
DOC_ID = "mavis-doc"
PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


class RealData:
    """Quotes of mavis page 4, the Table 2 crop, and loaders over them."""

    def __init__(self) -> None:
        with pymupdf.open(MAVIS) as doc:
            page = doc[PAGE]
            caption_hit = page.search_for("Table 2")[0]
            blocks = page.get_text("blocks")
            caption = next(b for b in blocks if pymupdf.Rect(b[:4]).contains(caption_hit))
            # Table 2 is the text and rules above its caption in the left column
            table = pymupdf.Rect()
            for b in blocks:
                if b[3] <= caption_hit.y0 and b[0] < page.rect.width / 2:
                    table |= pymupdf.Rect(b[:4])
            for drawing in page.get_drawings():
                if drawing["rect"].y1 <= caption_hit.y0 and drawing["rect"].x0 < page.rect.width / 2:
                    table |= drawing["rect"]
            self.table_rect = table
            pixmap = page.get_pixmap(clip=table, dpi=144)
            self.crop = pixmap.tobytes("png")
            self.crop_size = (pixmap.width, pixmap.height)
            result = next(b for b in blocks if b[4].startswith("As a result"))
            self.page_size = (page.rect.width, page.rect.height)
            table_text = page.get_text(clip=table)
        self.quotes = (
            ContextQuote("q-cap", "text", 1, DOC_ID, "mavis-aaai2026.pdf", PAGE, "text", caption[4], bbox=caption[:4]),
            ContextQuote("q-res", "text", 2, DOC_ID, "mavis-aaai2026.pdf", PAGE, "text", result[4], bbox=result[:4]),
            # a hostile quote: document text may hold markup; it must show as text
            ContextQuote("q-bad", "text", 3, DOC_ID, "mavis-aaai2026.pdf", PAGE, "text", result[4] + PAYLOAD),
            ContextQuote(
                "q-tab",
                "image",
                1,
                DOC_ID,
                "mavis-aaai2026.pdf",
                PAGE,
                "table",
                table_text,
                caption=caption[4],
                img_path="crops/mavis/table2.png",
                bbox=tuple(table),
            ),
        )
        self.page_loads: list[tuple[str, int]] = []
        self._pages = PdfPages({DOC_ID: MAVIS})

    def load_image(self, img_path: str) -> bytes:
        if img_path != "crops/mavis/table2.png":
            raise FileNotFoundError(img_path)
        return self.crop

    def load_page(self, doc_id: str, page_idx: int):
        self.page_loads.append((doc_id, page_idx))
        return self._pages(doc_id, page_idx)


ANSWER = (
    "Qwen3-8B verifies textual groundedness best, with an F1-score of 53.7 [1].\n\n"
    "![Verifier F1-scores by modality](image1)\n\n"
    "89% of the questions exhibit information-seeking intent [2]. "
    f"The {PAYLOAD} verifier was trained on 12 million pages [3].\n"
)


def checked_answer() -> CheckedAnswer:
    """As the checker reports it: the last sentence's number 12 is in no quote."""
    return CheckedAnswer(
        markdown=ANSWER,
        sentences=(
            CheckedSentence(
                0,
                "Qwen3-8B verifies textual groundedness best, with an F1-score of 53.7 [1].",
                (Citation("q-cap", "text", 1, True, "numbers 53.7 found"),),
                True,
            ),
            CheckedSentence(
                1,
                "![Verifier F1-scores by modality](image1)",
                (Citation("q-tab", "image", 1, True, "content words 3/4"),),
                True,
            ),
            CheckedSentence(
                2,
                "89% of the questions exhibit information-seeking intent [2].",
                (Citation("q-res", "text", 2, True, "numbers 89 found"),),
                True,
            ),
            CheckedSentence(
                3,
                f"The {PAYLOAD} verifier was trained on 12 million pages [3].",
                (Citation("q-bad", "text", 3, False, "numbers 12 not found"),),
                False,
            ),
        ),
        invalid=1,
        repaired=0,
        cited_quote_ids=("q-cap", "q-tab", "q-res", "q-bad"),
    )


def answer_view(data: RealData, question_id: str = "mavis-q1", question: str | None = None) -> AnswerView:
    return AnswerView(
        question_id=question_id,
        question=question or "Which verifier is best on text in Table 2? </title><script>alert(1)</script>",
        checked=checked_answer(),
        quotes=data.quotes,
        generator="offline",
        seconds=0.42,
        load_image=data.load_image,
        load_page=data.load_page,
    )


@pytest.fixture(scope="module")
def data() -> RealData:
    return RealData()


class Elements(HTMLParser):
    """Every start tag with its attributes, and the tag nesting checked as it goes."""

    VOID = frozenset({"meta", "img", "br", "hr", "input", "link", "col", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def decode_data_url(url: str) -> tuple[str, Image.Image]:
    head, payload = url.split(",", 1)
    mime = head.removeprefix("data:").removesuffix(";base64")
    return mime, Image.open(io.BytesIO(base64.b64decode(payload)))


def test_html_page_escapes_document_text_and_stays_well_formed(data: RealData) -> None:
    html = render_answer_page(answer_view(data))
    parsed = parse(html)
    assert parsed.errors == [] and parsed.stack == []
    # only the page's own script: the payload from the quote, the answer and the question is text
    assert [tag for tag, _ in parsed.tags].count("script") == 1
    assert "window.__pwned" not in "".join(html.split("<script>")[1:]).split("</script>")[0]
    assert all(attrs.get("onerror") is None for _, attrs in parsed.tags)
    text = "".join(parsed.text)
    assert PAYLOAD in text  # shown to the reader as it is in the document
    assert "</title><script>alert(1)</script>" in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html


def test_html_images_are_data_urls_of_the_real_crop_and_page(data: RealData) -> None:
    parsed = parse(render_answer_page(answer_view(data)))
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    crop = next(a for a in images if a.get("alt") == "Verifier F1-scores by modality")
    mime, image = decode_data_url(crop["src"])
    assert mime == "image/png" and image.size == data.crop_size
    pages = [a for a in images if a.get("id", "").startswith("pg")]
    assert len(pages) == 1  # four quotes on one page: one page image
    mime, page = decode_data_url(pages[0]["src"])
    # 612 x 792 pt at 80 dpi: 612 * 80 / 72 = 680, 792 * 80 / 72 = 880
    assert mime == "image/png" and page.size == (680, 880)
    others = [a for a in images if "data-same-as" in a]
    assert len(others) == 3 and all(a["data-same-as"] == pages[0]["id"] for a in others)
    assert data.page_loads.count((DOC_ID, PAGE)) >= 1


def test_html_has_no_network_reference_and_every_citation_a_target(data: RealData) -> None:
    html = render_answer_page(answer_view(data))
    parsed = parse(html)
    for tag, attrs in parsed.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, name, value[:80])
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", html, re.I)
    policy = next(a["content"] for tag, a in parsed.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert policy.startswith("default-src 'none'; img-src data:;")  # the browser may fetch nothing
    ids = {attrs["id"] for _, attrs in parsed.tags if "id" in attrs}
    cites = [attrs for tag, attrs in parsed.tags if tag == "a" and "cite" in attrs.get("class", "").split()]
    # [1], image 1 (the crop's caption), [2], [3]
    assert [c["href"] for c in cites] == ["#a0-t1", "#a0-i1", "#a0-t2", "#a0-t3"]
    assert all(c["href"][1:] in ids for c in cites)
    cards = [attrs["id"] for tag, attrs in parsed.tags if tag == "details"]
    assert cards == ["a0-t1", "a0-i1", "a0-t2", "a0-t3"]


def test_html_marks_the_unsupported_sentence_with_its_reason(data: RealData) -> None:
    html = render_answer_page(answer_view(data))
    marks = re.findall(r'<mark class="unsupported">(.*?)</mark>', html, re.S)
    marked = re.sub(r"<[^>]*>", "", "".join(marks))  # the marked text, without the citation link's title
    assert "verifier was trained on 12 million pages" in marked
    assert "53.7" not in marked and "information-seeking" not in marked  # supported sentences stay plain
    assert 'title="Not supported by its citations — [3]: numbers 12 not found"' in html
    assert "1 citation of quotes outside the context dropped" in html


def test_box_overlay_is_the_quote_bbox_over_the_page(data: RealData) -> None:
    html = render_answer_page(answer_view(data))
    card = html.split('id="a0-i1"')[1].split("</details>")[0]
    box = re.search(r'class="box" style="left:([\d.]+)%;top:([\d.]+)%;width:([\d.]+)%;height:([\d.]+)%', card)
    assert box
    x0, y0, x1, y1 = data.table_rect
    page_w, page_h = data.page_size
    # e.g. left = 59.5 / 612 = 9.72 %, width = (287.0 - 59.5) / 612 = 37.17 %
    expected = (100 * x0 / page_w, 100 * y0 / page_h, 100 * (x1 - x0) / page_w, 100 * (y1 - y0) / page_h)
    assert [float(v) for v in box.groups()] == pytest.approx(expected, abs=0.01)


def test_report_renders_each_page_once_with_a_table_of_contents(data: RealData) -> None:
    data.page_loads.clear()
    views = [answer_view(data, "q1", "First question?"), answer_view(data, "q2", "Second question?")]
    failed = replace(answer_view(data, "q3", "Third?"), error="server at 127.0.0.1:9 refused the connection")
    html = render_report([*views, failed], "qa_dev answers")
    parsed = parse(html)
    assert parsed.errors == [] and parsed.stack == []
    assert data.page_loads == [(DOC_ID, PAGE)]  # eight cards on page 4, one render
    assert len(re.findall(r'<img id="pg\d+" src="data:image/png', html)) == 1
    toc = [a["href"] for tag, a in parsed.tags if tag == "a" and "cite" not in a.get("class", "")]
    assert toc == ["#a0", "#a1", "#a2"]
    sections = [a["id"] for tag, a in parsed.tags if tag == "section" and "answer" in a.get("class", "")]
    assert sections == ["a0", "a1", "a2"]
    assert "No answer: server at 127.0.0.1:9 refused the connection" in "".join(parsed.text)
    ids = [a["id"] for _, a in parsed.tags if "id" in a]
    assert len(ids) == len(set(ids))  # answers' ids never collide
    # the crop is embedded once per answer that places it
    assert html.count(base64.b64encode(data.crop).decode()) == 2


def test_missing_crop_and_missing_pdf_are_shown_not_raised(data: RealData, tmp_path: Path) -> None:
    quotes = tuple(replace(q, img_path="crops/gone.png") if q.modality == "image" else q for q in data.quotes)
    view = replace(answer_view(data), quotes=quotes, load_page=PdfPages({DOC_ID: tmp_path / "moved.pdf"}))
    html = render_answer_page(view)
    assert "image unavailable: crops/gone.png" in html
    assert "page image unavailable: no PDF at" in html
    assert parse(html).errors == []


def test_markdown_has_footnotes_the_crop_and_escaped_quotes(data: RealData) -> None:
    text = render_markdown(answer_view(data))
    assert text.startswith(
        "## Which verifier is best on text in Table 2? \\</title\\>\\<script\\>alert(1)\\</script\\>"
    )
    assert "F1-score of 53.7 [^t1]." in text
    url = re.search(r"!\[Verifier F1-scores by modality\]\((data:image/png;base64,[^)]+)\)", text)
    assert url and decode_data_url(url.group(1))[1].size == data.crop_size
    assert "*image 1: Table 2 — mavis-aaai2026.pdf p.4*[^image1]" in text
    assert "⚠ *(unsupported: \\[3\\]: numbers 12 not found)*" in text
    footnotes = dict(re.findall(r"^\[\^(\w+)\]: (.*)$", text, re.M))
    assert list(footnotes) == ["t1", "image1", "t2", "t3"]
    assert footnotes["t3"].endswith(
        r"raw sources. \<script\>window.\_\_pwned = 1\</script\>\<img src=x onerror=\"window.\_\_pwned = 2\"\>".replace(
            '\\"', '"'
        )
    )
    assert not re.search(r"(?<!\\)<", text)  # every `<` escaped: no viewer reads it as HTML


def test_terminal_shows_citations_image_line_and_sources(data: RealData) -> None:
    bracketed = replace(data.quotes[1], text="[bold red]not markup[/] stays literal")
    quotes = (data.quotes[0], bracketed, *data.quotes[2:])
    console = Console(record=True, width=200, color_system=None)
    console.print(render_terminal("Which verifier is best?", checked_answer(), quotes))
    out = console.export_text()
    lines = out.splitlines()
    assert lines[0] == "Which verifier is best?"
    assert "[image 1: Table 2 — mavis-aaai2026.pdf p.4]" in lines
    assert any(line.startswith("Qwen3-8B verifies") and line.endswith("53.7 [1].") for line in lines)
    assert any(line.rstrip().endswith("12 million pages [3]. ⚠1") for line in lines)
    sources = lines[lines.index("Sources") + 1 :]
    assert [s.split()[0] for s in sources if s.strip()] == ["[1]", "image1", "[2]", "[3]"]
    assert "[2] mavis-aaai2026.pdf p.4 (text) “[bold red]not markup[/] stays literal”" in out
    assert " ⚠1 The <script>" in out and "— [3]: numbers 12 not found" in out


def test_terminal_shows_the_short_answer_after_the_answer(data: RealData) -> None:
    console = Console(record=True, width=200, color_system=None)
    console.print(render_terminal("Which verifier is best?", checked_answer(), data.quotes, "Qwen3-8B"))
    lines = console.export_text().splitlines()
    assert "Short answer: Qwen3-8B" in lines
    assert lines.index("Short answer: Qwen3-8B") < lines.index("Sources")  # the answer's, not a source's
    console = Console(record=True, width=200, color_system=None)
    console.print(render_terminal("Which verifier is best?", checked_answer(), data.quotes))
    assert "Short answer" not in console.export_text()  # a generator that gave none: no line


def test_html_page_shows_the_short_answer_escaped(data: RealData) -> None:
    view = replace(answer_view(data), short_answer="Qwen3-8B <b>53.7</b>")
    html = render_answer_page(view)
    parsed = parse(html)
    assert parsed.errors == [] and parsed.stack == []
    assert "Short answer: Qwen3-8B <b>53.7</b>" in "".join(parsed.text)  # as text, not markup
    assert "&lt;b&gt;53.7&lt;/b&gt;" in html
    assert "Short answer" not in render_answer_page(answer_view(data))  # none given: no line


def test_marks_skip_list_and_table_syntax() -> None:
    markdown = "- Alpha rose 5% [1].\n\n| model | F1 [2] |\n| --- | --- |\n| Qwen | 53.7 [2] |\n"
    cite = Citation("q", "text", 1, False, "numbers 5 not found")
    sentences = (
        CheckedSentence(0, "- Alpha rose 5% [1].", (cite,), False),
        CheckedSentence(1, "| Qwen | 53.7 [2] |", (replace(cite, number=2),), False),
    )
    marked = mark_answer(markdown, sentences)
    assert marked.text.startswith("- \u2e20Alpha rose 5% \u2e220\u2e23.\u2e21\n")
    assert "| \u2e20Qwen | 53.7 \u2e222\u2e23\u2e21 |" in marked.text
    assert [(p.modality, p.number) for p in marked.placements] == [("text", 1), ("text", 2), ("text", 2)]
    assert marked.unplaced == ()


def test_rotated_page_box_maps_to_the_shown_page() -> None:
    with pymupdf.open(ROTATED) as doc:
        block = doc[0].get_text("blocks")[0][:4]  # unrotated points, as the parser stores boxes
    page = render_page(ROTATED, 0, fmt="png", boxes=[block])
    assert (page.width, page.height) == pytest.approx((841.89, 595.28), abs=0.01)  # A4 turned 90°
    x0, y0, x1, y1 = block
    # rotation by 90°: shown x = 841.89 - y, shown y = x
    left, top, width, height = page.box_percent(block)
    assert left == pytest.approx(100 * (841.89 - y1) / 841.89, abs=0.01)
    assert top == pytest.approx(100 * x0 / 595.28, abs=0.01)
    assert width == pytest.approx(100 * (y1 - y0) / 841.89, abs=0.01)
    assert height == pytest.approx(100 * (x1 - x0) / 595.28, abs=0.01)
    # the box PyMuPDF drew lands where the overlay would: red on the shown box's left edge
    image = Image.open(io.BytesIO(page.data)).convert("RGB")
    px = image.width / 100
    edge_x, mid_y = round(left * px), round((top + height / 2) * image.height / 100)
    reds = [image.getpixel((x, mid_y)) for x in range(edge_x - 2, edge_x + 3)]
    assert any(r > 180 and g < 110 and b < 110 for r, g, b in reds), reds


def test_every_sentence_the_checker_rejects_is_flagged(data: RealData) -> None:
    from interleaf.generate.citations import check_answer

    markdown = (
        ANSWER + "\n- Qwen2VL-7B scores 45.0 on text and 49.6 on images [image 1].\n"
        "- The best image verifier reaches 77.0 [1].\n\n| model | F1 |\n|---|---|\n| Qwen3-8B | 99.9 [1] |\n"
    )
    checked = check_answer(markdown, data.quotes)
    rejected = [s for s in checked.sentences if s.supported is False]
    assert len(rejected) >= 3  # 12 million, 77.0 and 99.9 are in no quote
    html = render_answer_page(replace(answer_view(data), checked=checked))
    parsed = parse(html)
    assert parsed.errors == [] and parsed.stack == []
    assert html.count('<span class="flag"') == len(rejected)
    assert '<ul class="unplaced">' not in html
    # the table row's cells are marked one by one; the citation link sits inside the mark
    assert '<td><mark class="unsupported">Qwen3-8B</mark></td>' in html
    assert '<td><mark class="unsupported">99.9 <a class="cite" href="#a0-t1"' in html
    assert '<li><mark class="unsupported">The best image verifier reaches 77.0 <a class="cite"' in html
