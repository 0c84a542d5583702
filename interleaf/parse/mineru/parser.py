"""MinerU 4 as a parse backend: `mineru.parse(...)` on a temporary copy of the PDF, its middle JSON
mapped to quotes in MinerU's reading order, crops of figures, tables and equations rendered with
PyMuPDF.

The middle JSON (`ParseResult.to_dict()`) is read rather than `structured_content()` or MinerU's
content-list renderer: those escape Markdown in the text (`image\\_file`) and turn tables into
Markdown, while the middle JSON keeps the text as MinerU read it and tables as HTML. Its boxes are
fractions (0–1) of the page as displayed.

`mineru` is imported only when a document is parsed: it is an optional extra. Its flash workers
are spawned processes, so a script that parses must guard its entry point with
`if __name__ == "__main__":`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interleaf.errors import ConfigError, DocumentError
from interleaf.kinds import CROPPED_KINDS
from interleaf.parse.chunks import parse_pages
from interleaf.parse.config import MineruConfig
from interleaf.parse.facts import DocumentFacts, document_facts
from interleaf.parse.mineru.common import (
    FURNITURE_TYPES,
    TEXT_ITEM_KINDS,
    PageGeometry,
    furniture_kind,
    mapped_quote,
    parsed_page,
    table_text_and_html,
    unrotate_page,
)
from interleaf.parse.protocol import PageResult, ParsedDocument, ParsedQuote
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.render import crop_png
from interleaf.stage import PageMap

# MinerU 4 block type -> quote kind, for blocks that carry a caption / footnote / body.
VISUAL_KINDS = {"image": "figure", "chart": "figure", "table": "table", "code": "code"}
TITLE_TYPES = frozenset({"doc_title", "paragraph_title"})
LIST_TYPES = frozenset({"list", "index"})  # index: a table of contents
_SPAN_TYPES = frozenset({"text", "equation_inline", "code_inline"})


# ---------------------------------------------------------------------------------------------
# Middle JSON blocks -> quote fields.


def _is_span(item: Any) -> bool:
    """Inline spans and child blocks share `type: text`; a span's content is a string."""
    if not isinstance(item, dict):
        return False
    if item.get("type") == "hyperlink":
        return "url" in item
    return item.get("type") in _SPAN_TYPES and isinstance(item.get("content"), str)


def spans_text(spans: list[dict[str, Any]]) -> str:
    parts = []
    for span in spans:
        if span.get("type") == "hyperlink":
            parts.append(spans_text(span.get("content") or []))
        elif span.get("type") == "equation_inline":
            parts.append(f"${span['content']}$")
        else:
            parts.append(span.get("content") or "")
    return "".join(parts)


def block_text(block: dict[str, Any]) -> str:
    """A block's text: a string body, a list of inline spans, or child blocks one per line."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return ""
    if all(_is_span(item) for item in content):
        return spans_text(content)
    children = (block_text(child) for child in content if isinstance(child, dict))
    return "\n".join(t.strip() for t in children if t.strip())


@dataclass
class BlockQuote:
    """A quote before geometry: box still in MinerU's page fractions."""

    kind: str
    fractions: tuple[float, float, float, float]
    text: str
    caption: str | None = None
    footnote: str | None = None
    html: str | None = None
    furniture: bool = False


def _children(block: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    content = block.get("content")
    if not isinstance(content, list):
        return []
    return [c for c in content if isinstance(c, dict) and str(c.get("type", "")).endswith(suffix)]


def _joined(blocks: list[dict[str, Any]]) -> str | None:
    text = "\n".join(t.strip() for t in (block_text(b) for b in blocks) if t.strip())
    return text or None


def _visual_quote(block: dict[str, Any], fractions: tuple[float, float, float, float]) -> BlockQuote:
    kind = VISUAL_KINDS[block["type"]]
    bodies = _children(block, "_body")  # MinerU validates exactly one
    body = bodies[0] if bodies else {}
    html = None
    if kind == "table":
        text, html = table_text_and_html(block_text(body))
    elif kind == "code":
        text = block_text(body).strip("\n")
    else:
        text = block_text(body).strip()  # flash: the text layer inside the image
    return BlockQuote(
        kind=kind,
        fractions=fractions,
        text=text,
        caption=_joined(_children(block, "_caption")),
        footnote=_joined(_children(block, "_footnote")),
        html=html,
    )


def block_quote(block: dict[str, Any]) -> BlockQuote | None:
    """One top-level block of a page as a quote; None for blocks with nothing to quote."""
    block_type = str(block.get("type", ""))
    bbox = block.get("bbox")
    if not bbox or len(bbox) != 4:
        return None  # MinerU requires a box on every top-level PDF block; guard all the same
    fractions = (float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3]))
    if block_type in VISUAL_KINDS:
        quote = _visual_quote(block, fractions)
    elif block_type == "equation":
        quote = BlockQuote("equation", fractions, block_text(block).strip())  # LaTeX; empty in flash
    elif block_type in FURNITURE_TYPES:
        y_mid = (fractions[1] + fractions[3]) / 2
        quote = BlockQuote(furniture_kind(block_type, y_mid), fractions, block_text(block).strip(), furniture=True)
    elif block_type in TITLE_TYPES:
        quote = BlockQuote("title", fractions, block_text(block).strip())
    elif block_type in LIST_TYPES:
        quote = BlockQuote("list", fractions, block_text(block).strip())
    else:  # text, ref_text, page_footnote and any type newer than this mapping
        quote = BlockQuote(TEXT_ITEM_KINDS.get(block_type, "text"), fractions, block_text(block).strip())
    if not quote.text and quote.kind not in CROPPED_KINDS:
        return None
    return quote


def doc_title(blocks: list[dict[str, Any]]) -> str | None:
    """MinerU's document title on the first page (paragraph titles such as "Abstract" are not)."""
    for block in blocks:
        if block.get("type") == "doc_title":
            text = " ".join(block_text(block).split())
            if len(text) > 3:
                return text
    return None


# ---------------------------------------------------------------------------------------------
# Per-page work, spread with page_map.


@dataclass(frozen=True)
class PageWork:
    """What a page job needs besides the page: MinerU's blocks of that page and the run's settings."""

    blocks: tuple[dict[str, Any], ...]
    ocr_used: bool
    crop_dpi: int


def _page_quotes(page: pymupdf.Page, geometry: PageGeometry, work: PageWork) -> Iterator[ParsedQuote]:
    for block in work.blocks:
        bq = block_quote(block)
        if bq is None:
            continue
        bbox = geometry.to_points(bq.fractions)
        png = crop_png(page, bbox, work.crop_dpi) if bq.kind in CROPPED_KINDS else None
        yield mapped_quote(geometry.page_idx, bq, bbox, png)


def parse_page(page: pymupdf.Page, work: PageWork) -> PageResult:
    """Module-level so a process pool can run it (through interleaf.parse.chunks)."""
    geometry = unrotate_page(page)
    quotes = list(_page_quotes(page, geometry, work))
    return PageResult(parsed_page(page, geometry, work.ocr_used), quotes)


# ---------------------------------------------------------------------------------------------


class MineruParser:
    name = "mineru"

    def __init__(self, config: MineruConfig, pages_per_chunk: int = 8) -> None:
        if importlib.util.find_spec("mineru") is None:
            raise ConfigError("parse.backend=mineru needs MinerU: pip install 'interleaf[mineru]'")
        self.config = config
        self.pages_per_chunk = pages_per_chunk  # crops are rendered in the page workers, a run at a time
        # Output follows MinerU's own version too: a new release must not reuse stored parses.

    def fingerprint_config(self) -> dict[str, Any]:
        # Where models are looked up changes whether a parse can run, not what it produces.
        return self.config.model_dump(exclude={"model_source"})

    def parse(
        self, pdf: bytes, name: str, page_map: PageMap = map, facts: DocumentFacts | None = None
    ) -> ParsedDocument:
        facts = facts or document_facts(pdf, name)  # bad input fails here, before MinerU starts
        page_count, title = facts.page_count, facts.title

        middle = self._run_mineru(pdf, name).to_dict()
        by_page = {p["page_idx"]: tuple(p.get("blocks") or ()) for p in middle.get("pages") or ()}
        # MinerU decides txt or ocr for the whole document; without its OCR models it never OCRs.
        ocr_used = ((middle.get("extensions") or {}).get("mineru") or {}).get("parse_mode") == "ocr"

        done = parse_pages(
            pdf,
            name,
            page_count,
            self.pages_per_chunk,
            page_map,
            parse_page,
            lambda i: PageWork(by_page.get(i, ()), ocr_used, self.config.crop_dpi),
        )

        rejects = [(i, "MinerU returned no result for this page") for i in range(page_count) if i not in by_page]
        return ParsedDocument(
            page_count=page_count,
            title=title,
            pages=done.pages,
            quotes=done.quotes,
            page_rejects=sorted(rejects + done.page_rejects),
            range_rejects=done.range_rejects,
            outline=facts.outline,
            page_title=doc_title(list(by_page.get(0, ()))),
        )

    def _run_mineru(self, pdf: bytes, name: str) -> Any:
        import mineru  # lazily: an optional extra, and heavy
        from pypdfium2 import PdfiumError  # MinerU's PDF reader

        cfg = self.config
        os.environ["MINERU_MODEL_SOURCE"] = cfg.model_source
        with tempfile.TemporaryDirectory(prefix="interleaf-mineru-") as tmp:
            path = Path(tmp) / "document.pdf"  # MinerU takes a path; the real name may be anything
            path.write_bytes(pdf)
            try:
                return mineru.parse(path, tier=cfg.tier, ocr_mode=cfg.ocr_mode, image_analysis=cfg.image_analysis)
            except (ConnectionError, FileNotFoundError) as exc:
                raise self._models_missing(name, exc) from exc
            except PdfiumError as exc:
                raise DocumentError(name, f"MinerU's PDF reader (PDFium) cannot open it: {exc}") from exc

    def _models_missing(self, name: str, exc: Exception) -> Exception:
        """MinerU fetches models on first need (OCR for pages without a usable text layer, layout
        models for tiers above flash) and fails when it cannot: offline, or no local copy."""
        cfg = self.config
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        if cfg.tier == "flash" and cfg.ocr_mode == "auto":
            # Only documents MinerU decides to OCR hit this: a property of the document.
            return DocumentError(
                name,
                "MinerU flash decided this document needs OCR and its OCR models are not available here "
                f"({detail}); parse it with parse.backend=layout, or parse.mineru.ocr_mode=txt to skip OCR",
            )
        return ConfigError(
            f"MinerU tier {cfg.tier} with ocr_mode {cfg.ocr_mode} needs model files that are not available "
            f"here ({detail}); tier flash with ocr_mode auto or txt runs without them on PDFs with a text layer"
        )
