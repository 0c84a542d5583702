"""The offline default parser: rapid-layout regions, text from the PDF's text layer inside each
region, RapidOCR where a page has no usable text layer, PNG crops of figures, tables and
equations, captions attached, reading order by columns; a sheet holding two printed pages (a
spread: layout/spread.py) read as two pages."""

from __future__ import annotations

from typing import Any

import numpy as np

from interleaf.kinds import CROPPED_KINDS, FURNITURE_KINDS
from interleaf.parse.chunks import parse_pages
from interleaf.parse.config import LayoutConfig
from interleaf.parse.facts import DocumentFacts, document_facts
from interleaf.parse.layout import paragraphs
from interleaf.parse.layout import regions as rg
from interleaf.parse.layout.model import detect_regions, model_input
from interleaf.parse.layout.reading_order import reading_order
from interleaf.parse.layout.spread import find_gutter
from interleaf.parse.protocol import PageResult, ParsedDocument, ParsedPage, ParsedQuote
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.ocr.config import RapidOcrConfig
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import Box, crop_png, render_bgr
from interleaf.pdf.words import Word, ocr_words, text_layer_usable, text_layer_words
from interleaf.stage import PageMap
from interleaf.text.formula import is_formula

# Kinds the layout model gives a formula set on lines of its own: a short display formula looks like
# a heading (a line apart, often centred) or a paragraph of one line.
FORMULA_LOOKALIKES = ("title", "text")
# A display formula spans at most this many rows of text: its main line, and above and below it a
# sum's limits or a fraction's parts. A box of more rows is a paragraph or a table, whatever it holds.
MAX_FORMULA_ROWS = 3


def _is_blank(image_bgr: np.ndarray) -> bool:
    return bool(image_bgr.min() > 245)


def _page_words(page: pymupdf.Page, layout_image: np.ndarray, cfg: LayoutConfig) -> tuple[list[Word], bool, bool]:
    """(words, has_text_layer, ocr_used)"""
    # loads its models on first read only; a whole page keeps RapidOCR's own detector sizing: held to
    # 1280 px (describe's bound), the Redpaper's scanned page 16 lost its CREATE MASK statement; and
    # every line's orientation is checked, as RapidOCR does: a page may be scanned upside down
    ocr = RapidOcrEngine(RapidOcrConfig(threads=cfg.threads, det_max_side=None, textline_orientation="all"))
    words, hidden = text_layer_words(page, ocr)  # ocr: a glyph the font leaves unnamed is read
    has_text_layer = bool(words) or hidden > 0
    if text_layer_usable(words, hidden, cfg.min_clean_token_share):
        return words, has_text_layer, False
    if _is_blank(layout_image):
        return [], has_text_layer, False
    lines = ocr.read(render_bgr(page, cfg.ocr_dpi))
    return ocr_words(lines, 72 / cfg.ocr_dpi), has_text_layer, True


def parse_page(page: pymupdf.Page, cfg: LayoutConfig) -> PageResult:
    rotation = page.rotation
    if rotation:
        # Words come in unrotated coordinates; render unrotated too so boxes agree.
        page.set_rotation(0)
    image = model_input(page)
    words, has_text_layer, ocr_used = _page_words(page, image, cfg)
    source = "ocr" if ocr_used else "text_layer"
    width, height = page.rect.width, page.rect.height
    gutter = find_gutter(words, width, height)
    if gutter is None:
        ordered = _area_blocks((0.0, 0.0, width, height), image, words, cfg)
    else:
        # two printed pages on one sheet (layout/spread.py): each read as a page of its own
        (left, right), (left_words, right_words) = gutter.halves(width, height), gutter.split(words)
        ordered = _area_blocks(left, model_input(page, left), left_words, cfg)
        ordered += _area_blocks(right, model_input(page, right), right_words, cfg)

    quotes = []
    for b in ordered:
        quotes.append(
            ParsedQuote(
                page_idx=page.number,
                kind=b.kind,
                bbox=b.bbox,
                text=b.text,
                text_source=source if b.text else "none",
                caption=b.caption,
                furniture=b.kind in FURNITURE_KINDS,
                score=b.score,
                png=crop_png(page, b.bbox, cfg.crop_dpi) if b.kind in CROPPED_KINDS else None,
            )
        )
    parsed = ParsedPage(
        page_idx=page.number,
        width=page.rect.width,
        height=page.rect.height,
        rotation=rotation,
        has_text_layer=has_text_layer,
        ocr_used=ocr_used,
    )
    return PageResult(parsed, quotes)


def _area_blocks(area: Box, image: np.ndarray, words: list[Word], cfg: LayoutConfig) -> list[rg.Block]:
    """The blocks of a page, or of one printed page of a spread (`area`, `image` its model input,
    `words` those inside it), in reading order."""
    found = detect_regions(image, area, cfg.conf_thresh, cfg.iou_thresh, cfg.threads)
    blocks = rg.merge_split_figures(rg.dedupe(rg.blocks_from_regions(found)))
    orphans = rg.complete_lines(blocks, rg.assign_words(blocks, words))
    blocks = [b for b in blocks if b.words or b.kind in CROPPED_KINDS]
    blocks += rg.blocks_from_orphans(orphans)
    blocks = paragraphs.split_at_headings(blocks)
    for b in blocks:
        b.text = rg.table_words_to_text(b.words) if b.kind == "table" else rg.words_to_text(b.words)
    blocks = rg.absorb_float_labels(rg.attach_captions(blocks, cfg.min_caption_gap_pt))
    for b in blocks:
        if _is_display_formula(b):
            b.kind = "equation"  # cropped below, as the layout model's own equations are
    x0, y0, x1, y1 = area
    if not blocks and not _is_blank(image):
        # Something is drawn but nothing was recognised: keep the page as one figure.
        blocks = [rg.Block("figure", x0, y0, x1, y1, None)]
    return paragraphs.join_cut_paragraphs(reading_order(blocks, x1 - x0, x0))


def _is_display_formula(b: rg.Block) -> bool:
    """A box of its own holding a few rows that read as a formula (interleaf/text/formula.py)."""
    rows = b.text.splitlines()
    return b.kind in FORMULA_LOOKALIKES and 0 < len(rows) <= MAX_FORMULA_ROWS and is_formula(b.text)


def _page_title(quotes: list[ParsedQuote]) -> str | None:
    for q in quotes:
        if q.page_idx > 0:
            break
        if q.kind == "title" and len(q.text) > 3:
            return " ".join(q.text.split())
    return None


class LayoutParser:
    name = "layout"

    def __init__(self, config: LayoutConfig, pages_per_chunk: int = 8) -> None:
        self.config = config
        self.pages_per_chunk = pages_per_chunk

    def fingerprint_config(self) -> dict[str, Any]:
        # threads change speed, never output
        return self.config.model_dump(exclude={"threads"})

    def parse(
        self, pdf: bytes, name: str, page_map: PageMap = map, facts: DocumentFacts | None = None
    ) -> ParsedDocument:
        facts = facts or document_facts(pdf, name)
        done = parse_pages(
            pdf, name, facts.page_count, self.pages_per_chunk, page_map, parse_page, lambda _i: self.config
        )
        return ParsedDocument(
            page_count=facts.page_count,
            title=facts.title,
            pages=done.pages,
            quotes=done.quotes,
            page_rejects=done.page_rejects,
            range_rejects=done.range_rejects,
            outline=facts.outline,
            page_title=_page_title(done.quotes),
        )
