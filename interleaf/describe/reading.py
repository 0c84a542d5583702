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
fingerprint): a re-parse yielding the same crops reads nothing again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from interleaf.describe.ocr_cache import CachedOcr
from interleaf.describe.table_structure import markdown_table
from interleaf.describe.vector_text import PageText, use_vector_text
from interleaf.fingerprint import canonical_json
from interleaf.heap import return_freed_memory
from interleaf.pdf.document import empty_pdf_store
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.ocr.protocol import OcrEngine, OcrError
from interleaf.pdf.render import image_rects, render_bgr
from interleaf.pdf.rows import rows_text
from interleaf.pdf.rules import Rules, raster_rules, vector_rules
from interleaf.pdf.words import Word, ocr_words, text_layer_words, words_in_box
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
    if vector:
        text, conf, source, items = rows_text(words), 1.0, "text_layer", list(words)
        rules = page.rules.inside(box)
    elif lines:
        items = ocr_words(lines)
        text, conf, source = rows_text(items), float(np.mean([ln.conf for ln in lines])), ocr.name
        rules = raster_rules(pixels)  # in the crop's pixels, like the OCR boxes
    else:
        text, conf, source, items, rules = None, None, None, [], Rules()
    table_md = markdown_table(items, rules=rules) if quote["kind"] == "table" and items else None
    return {
        "ocr_text": text or None,
        "ocr_conf": conf if text else None,
        "ocr_source": source if text else None,
        "table_md": table_md,
        "table_source": source if table_md else None,
        "ocr_error": ocr_error,
    }


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
        fresh = got is None
        if got is None:
            got = read_quote(q, words, page, lambda q=q: render(q), ocr, settings)
            if got["ocr_error"] is None:
                cache.put(READ, key, got)
        out[q["quote_id"]] = Reading(key, png_sha, got, fresh)
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
        out[idx] = PageText(tuple(words), image_rects(page), vector_rules(page) if idx in ruled else Rules())
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
    try:
        with pymupdf.open(job.pdf_path) as pdf:
            # the text layer's stand-in glyphs are read by OCR once: their readings are cached too
            pages = page_texts(pdf, job.page_rows, set(job.pages), CachedOcr(job.ocr, job.cache, READ), ruled)
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
