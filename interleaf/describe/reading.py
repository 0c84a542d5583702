"""Reading an image quote: its OCR-text and table Markdown, from the text layer or OCR of its pixels.

This is describe's heavy half (OCR of raster crops: 92% of the 400-page IRS manual's describe), so
it runs by page range: the pages holding image quotes, in runs of `describe.pages_per_range`,
one `ReadJob` per run through the stage's page map (the ingest's page workers, or the Ray
cluster). A job opens the PDF once, reads each quote of its pages and files every reading in the
content cache as it goes: a 400-page manual's readings spread over the workers, and a describe
cut short resumes where its ranges stopped, reading nothing the cache holds. The describer, which
needs the whole document's text (its sentences referring to a figure), runs afterwards on the
readings (describe/stage.py).

A reading is keyed by its content (the crop's bytes, the vector words in its box, the OCR side's
fingerprint): a re-parse yielding the same crops reads nothing again. A table's Markdown is made
from a reading each time, never cached: a new table reader needs no OCR again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from interleaf.describe.figure_tables import figure_table, stands_on_grid
from interleaf.describe.ocr_cache import CachedOcr
from interleaf.describe.table_structure import markdown_table
from interleaf.describe.vector_text import PageText, use_vector_text
from interleaf.fingerprint import canonical_json
from interleaf.pdf.document import empty_pdf_store
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.ocr.protocol import OcrEngine, OcrError
from interleaf.pdf.render import image_rects, render_bgr
from interleaf.pdf.rows import group_rows, rows_text
from interleaf.pdf.rules import Box, Rules, Segment, raster_rules, vector_rules
from interleaf.pdf.words import Word, ocr_words, text_layer_words, words_in_box
from interleaf.runtime.heap import return_freed_memory
from interleaf.stage import ContentCache

READ = "read"  # the content cache's namespace of readings (and of glyph readings, ocr_cache.py)


def content_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


@dataclass(frozen=True)
class ReadingSettings:
    ocr_fingerprint: str
    min_conf: float = 0.5
    min_vector_words: int = 3
    max_raster_share: float = 0.3


@dataclass(frozen=True)
class Reading:
    """One image quote's reading, and the key it is cached under ("" when it was lost: not cached)."""

    key: str
    png_sha256: str
    values: Mapping[str, Any]  # ocr_text, ocr_conf, ocr_source, table_md, table_source, ocr_error
    fresh: bool  # read in this run, not found in the cache


def read_quote(
    quote: dict[str, Any],
    words: list[Word],
    page: PageText,
    image: Callable[[], np.ndarray],
    ocr: OcrEngine,
    s: ReadingSettings,
) -> dict[str, Any]:
    """OCR-text and table Markdown of one image quote, each with its source."""
    text = read_text(quote, words, page, image, ocr, s)
    return {k: v for k, v in text.items() if k not in LAYOUT} | table_values(quote, text, words, page)


# what a reading of pixels keeps besides its text, in the cache: the OCR lines' boxes and the
# grid's rules, which table Markdown is made from (made anew at every reading, never cached, so a
# better table reader needs no OCR again)
LAYOUT = ("lines", "rules")


def read_text(
    quote: dict[str, Any],
    words: list[Word],
    page: PageText,
    image: Callable[[], np.ndarray],
    ocr: OcrEngine,
    s: ReadingSettings,
) -> dict[str, Any]:
    """The quote's OCR-text with its source: the text layer's words in its box, else OCR of its
    pixels (then with the lines' boxes and the rules seen, `LAYOUT`)."""
    box = tuple(quote["bbox"])
    ocr_error, lines = None, []
    pixels = np.zeros((0, 0, 3), dtype=np.uint8)
    vector = use_vector_text(words, box, page.image_rects, s.min_vector_words, s.max_raster_share)
    if not vector:
        try:
            pixels = image()
            lines = [line for line in ocr.read(pixels) if line.conf >= s.min_conf]
        except OcrError as exc:  # one bad crop must not stop the document; it becomes a reject
            ocr_error = f"{type(exc).__name__}: {exc}"
        if not lines and words:  # nothing legible in pixels: the few vector words are better than nothing
            vector = True
    got: dict[str, Any] = {"ocr_text": None, "ocr_conf": None, "ocr_source": None, "ocr_error": ocr_error}
    if vector:
        text = rows_text(words)
        return got | ({"ocr_text": text, "ocr_conf": 1.0, "ocr_source": "text_layer"} if text else {})
    if not lines:
        return got
    items = ocr_words(lines)
    text = rows_text(items)
    if not text:
        return got
    rules = raster_rules(pixels)  # in the crop's pixels, like the OCR boxes
    return got | {
        "ocr_text": text,
        "ocr_conf": float(np.mean([ln.conf for ln in lines])),
        "ocr_source": ocr.name,
        "lines": [[w.x0, w.y0, w.x1, w.y1, w.text] for w in items],
        "rules": [[[r.at, r.start, r.end] for r in rules.horizontal], [[r.at, r.start, r.end] for r in rules.vertical]],
    }


def table_values(quote: dict[str, Any], text: Mapping[str, Any], words: list[Word], page: PageText) -> dict[str, Any]:
    """A table's Markdown (and a figure's whose words stand on a grid: a table the layout model
    took for a figure), from the words its text was read from."""
    box = tuple(quote["bbox"])
    none = {"table_md": None, "table_source": None}
    if quote["kind"] not in ("table", "figure") or not text["ocr_source"]:
        return none
    if text["ocr_source"] == "text_layer":
        items, rules, above = list(words), page.rules.inside(box), line_above(page.words, box, words)
    elif "lines" in text:
        items = [Word(x0, y0, x1, y1, t, i, 0, 0) for i, (x0, y0, x1, y1, t) in enumerate(text["lines"])]
        horizontal, vertical = text["rules"]
        rules, above = Rules(tuple(Segment(*r) for r in horizontal), tuple(Segment(*r) for r in vertical)), []
    else:
        return none
    if not items:
        return none
    if quote["kind"] == "figure":
        table_md = figure_table(items, rules)
    else:
        table_md = markdown_table(items, rules=rules, above=above)
    return {"table_md": table_md, "table_source": text["ocr_source"] if table_md else None}


def line_above(page_words: Sequence[Word], box: tuple[float, ...], inside: Sequence[Word]) -> list[Word]:
    """The printed line right above a box (within a line's height of it, and its width): where a
    table's header row is when the layout model's box left it out."""
    if not inside:
        return []
    heights = sorted(w.y1 - w.y0 for w in inside)
    h = heights[len(heights) // 2]
    x0, y0, x1, _y1 = box
    near = [w for w in page_words if y0 - 2.5 * h <= w.cy < y0 - 1.0 and x0 - h <= w.x0 and w.x1 <= x1 + h]
    rows = group_rows(near)
    if not rows or y0 - max(w.y1 for w in rows[-1]) > 1.5 * h:
        return []
    return rows[-1]


def read_quotes(
    quotes: Iterable[dict[str, Any]],
    pages: Mapping[int, PageText],
    render: Callable[[dict[str, Any]], np.ndarray],
    ocr: OcrEngine,
    settings: ReadingSettings,
    cache: ContentCache,
) -> dict[str, Reading]:
    """The reading of each quote (its `png_sha256`: the SHA-256 of its stored PNG crop), from the
    cache or read now and cached (a failed OCR is not cached: the next run tries again). `render`:
    the quote's box as a BGR image at OCR resolution, called only on a cache miss."""
    out = {}
    for q in quotes:
        png_sha = q["png_sha256"]
        page = pages.get(q["page_idx"], PageText((), ()))
        words = words_in_box(page.words, tuple(q["bbox"]))
        key = content_hash([png_sha, q["kind"], [(w.x0, w.y0, w.x1, w.y1, w.text) for w in words], settings])
        got = cache.get(READ, key)
        # a reading of pixels cached before it kept its lines' boxes cannot give a table: read again
        fresh = got is None or (got["ocr_source"] not in (None, "text_layer") and "lines" not in got)
        if fresh:
            got = read_text(q, words, page, lambda q=q: render(q), ocr, settings)
            if got["ocr_error"] is None:
                cache.put(READ, key, got)
        values = {k: v for k, v in got.items() if k not in LAYOUT} | table_values(q, got, words, page)
        out[q["quote_id"]] = Reading(key, png_sha, values, fresh)
    return out


def lost_reading(png_sha256: str, reason: str) -> Reading:
    """A quote whose range of pages did not end in its worker (crashed, hung, over the memory cap)."""
    values = dict.fromkeys(("ocr_text", "ocr_conf", "ocr_source", "table_md", "table_source"))
    return Reading("", png_sha256, {**values, "ocr_error": reason}, True)


def page_texts(
    pdf: pymupdf.Document,
    page_rows: Mapping[int, Mapping[str, Any]],
    wanted: set[int],
    ocr: OcrEngine | None = None,
    ruled: set[int] = frozenset(),  # type: ignore[assignment]
    figures: Mapping[int, Sequence[Box]] | None = None,
) -> dict[int, PageText]:
    """Visible words and raster image rectangles of the pages holding image quotes, and the ruling
    lines of the `ruled` pages (those holding tables). Pages read by OCR at parse time (no usable
    text layer) contribute no words: their text is in the pixels. `ocr` reads a glyph the text
    layer writes as a control character and its font leaves unnamed."""
    out = {}
    for idx in sorted(wanted):
        page = pdf[idx]
        info = page_rows.get(idx, {})
        words = []
        if info.get("has_text_layer", True) and not info.get("ocr_used", False):
            words, _hidden = text_layer_words(page, ocr)
        # a figure whose words stand on a grid is read as a table too, and needs the page's rules
        gridded = any(stands_on_grid(words_in_box(words, box)) for box in (figures or {}).get(idx, ()))
        out[idx] = PageText(tuple(words), image_rects(page), vector_rules(page) if idx in ruled or gridded else Rules())
    return out


def renderer(pdf: pymupdf.Document, dpi: int) -> Callable[[dict[str, Any]], np.ndarray]:
    """The quote's box as a BGR image at `dpi` (OCR engines take BGR)."""
    return lambda quote: render_bgr(pdf[quote["page_idx"]], dpi, tuple(quote["bbox"]))


@dataclass(frozen=True)
class ReadJob:
    """The image quotes of a run of pages, to read in a page worker. Everything in it is pickled to
    the worker, which renders what it must OCR from the PDF (a path every worker sees): the crops
    themselves stay with the stage, which sends only their hashes (the readings' cache keys)."""

    pdf_path: str
    pages: tuple[int, ...]
    # the image quotes on `pages` whose crop is stored (quote_id, kind, page_idx, bbox, png_sha256)
    quotes: tuple[dict[str, Any], ...]
    page_rows: Mapping[int, Mapping[str, Any]]  # has_text_layer, ocr_used of `pages`
    dpi: int
    ocr: OcrEngine
    settings: ReadingSettings
    cache: ContentCache

    def __len__(self) -> int:
        """Its pages: a page map gives a job that many pages' time (`parse.limits.page_timeout_s`)."""
        return len(self.pages)


def read_range(job: ReadJob) -> dict[str, Reading]:
    """Module-level so a process pool can run it."""
    ruled = {q["page_idx"] for q in job.quotes if q["kind"] == "table"}
    figures: dict[int, list[Box]] = {}
    for q in job.quotes:
        if q["kind"] == "figure":
            figures.setdefault(q["page_idx"], []).append(tuple(q["bbox"]))
    try:
        with pymupdf.open(job.pdf_path) as pdf:
            # the text layer's stand-in glyphs are read by OCR once: their readings are cached too
            ocr = CachedOcr(job.ocr, job.cache, READ)
            pages = page_texts(pdf, job.page_rows, set(job.pages), ocr, ruled, figures)
            return read_quotes(job.quotes, pages, renderer(pdf, job.dpi), job.ocr, job.settings, job.cache)
    finally:
        empty_pdf_store()
        # what the job freed besides its OCR reads (each hands its own back): renders, page texts
        return_freed_memory()


def page_ranges(quotes: Sequence[dict[str, Any]], size: int) -> list[tuple[tuple[int, ...], list[dict[str, Any]]]]:
    """The pages holding `quotes`, in runs of at most `size` such pages, each with its quotes."""
    by_page: dict[int, list[dict[str, Any]]] = {}
    for q in quotes:
        by_page.setdefault(q["page_idx"], []).append(q)
    pages = sorted(by_page)
    runs = [tuple(pages[i : i + size]) for i in range(0, len(pages), size)]
    return [(run, [q for p in run for q in by_page[p]]) for run in runs]
