"""Import MinerU 2.x/3.x `<name>_content_list.json` files as a ParsedDocument.

The format is a flat list of items in reading order. Every item has `type`, `page_idx` (0-based)
and `bbox` (x0, y0, x1, y1 scaled 0–1000 of the page as displayed). Types: `text` (titles carry
`text_level`), `equation` (`text` LaTeX, `img_path`), `image` (`img_path`, `image_caption`,
`image_footnote`), `table` (`img_path`, `table_body` HTML, `table_caption`, `table_footnote`),
and since 3.x `header`, `footer`, `page_number`, `aside_text`, `page_footnote`, `list`
(`list_items`), `index`, `code` (`code_body`, `code_caption`, `code_footnote`) and `chart`.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interleaf.errors import DocumentError
from interleaf.kinds import CROPPED_KINDS
from interleaf.parse.mineru.common import (
    BBOX_SCALE,
    FURNITURE_TYPES,
    PNG_SIGNATURE,
    TEXT_ITEM_KINDS,
    PageGeometry,
    furniture_kind,
    mapped_quote,
    parsed_page,
    table_text_and_html,
    unrotate_page,
)
from interleaf.parse.protocol import ParsedDocument, ParsedPage
from interleaf.pdf.document import metadata_title, mupdf_exceptions, open_pdf
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.render import crop_png

log = logging.getLogger(__name__)


@dataclass
class _Item:
    index: int  # position in the file, for error messages
    page_idx: int
    type: str
    fractions: tuple[float, float, float, float]
    raw: dict[str, Any]


def _fail(json_path: Path, reason: str) -> DocumentError:
    return DocumentError(str(json_path), reason)


def _load(json_path: Path) -> list[Any]:
    try:
        raw = json_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(json_path, f"cannot read the content list: {exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _fail(json_path, f"not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        hint = " (a MinerU 4 middle/structured JSON? use the mineru parse backend)" if isinstance(data, dict) else ""
        raise _fail(json_path, f"expected a JSON list of content items, got {type(data).__name__}{hint}")
    return data


def _bbox_fractions(json_path: Path, i: int, bbox: Any) -> tuple[float, float, float, float]:
    if bbox is None:
        raise _fail(json_path, f"item {i}: no bbox (content lists before MinerU 2.x carry no positions)")
    if (
        not isinstance(bbox, list | tuple)
        or len(bbox) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in bbox)
    ):
        raise _fail(json_path, f"item {i}: bbox must be four numbers, got {bbox!r}")
    x0, y0, x1, y1 = (float(v) for v in bbox)
    # One unit of slack: some writers round a box on the page edge to 1001.
    if min(x0, y0) < -1 or max(x1, y1) > BBOX_SCALE + 1:
        raise _fail(json_path, f"item {i}: bbox {bbox!r} is outside the 0–1000 page scale of a content list")
    if x1 < x0 or y1 < y0:
        raise _fail(json_path, f"item {i}: bbox {bbox!r} has x1 < x0 or y1 < y0")
    return tuple(min(max(v / BBOX_SCALE, 0.0), 1.0) for v in (x0, y0, x1, y1))  # type: ignore[return-value]


def _items(json_path: Path, data: list[Any]) -> list[_Item]:
    items = []
    for i, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise _fail(json_path, f"item {i}: expected an object, got {type(raw).__name__}")
        item_type = raw.get("type")
        if not isinstance(item_type, str) or not item_type:
            raise _fail(json_path, f"item {i}: missing type")
        page_idx = raw.get("page_idx")
        if page_idx is None:
            raise _fail(json_path, f"item {i} ({item_type}): missing page_idx")
        if not isinstance(page_idx, int) or isinstance(page_idx, bool) or page_idx < 0:
            raise _fail(json_path, f"item {i} ({item_type}): page_idx must be an integer >= 0, got {page_idx!r}")
        items.append(_Item(i, page_idx, item_type, _bbox_fractions(json_path, i, raw.get("bbox")), raw))
    # The file is in reading order already; a stable sort only guards the pages-in-order contract.
    items.sort(key=lambda it: it.page_idx)
    return items


def _strings(json_path: Path, item: _Item, key: str) -> list[str]:
    value = item.raw.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise _fail(json_path, f"item {item.index} ({item.type}): {key} must be a list of strings")


def _text(json_path: Path, item: _Item, key: str) -> str:
    value = item.raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(json_path, f"item {item.index} ({item.type}): {key} must be a string")
    return value


def _joined(parts: list[str]) -> str | None:
    text = "\n".join(p.strip() for p in parts if p.strip())
    return text or None


@dataclass
class _Mapped:
    kind: str
    text: str
    caption: str | None = None
    footnote: str | None = None
    html: str | None = None
    furniture: bool = False
    img_path: str | None = None


def _map_visual(json_path: Path, item: _Item) -> _Mapped:
    t = item.type
    if t == "table":
        text, html = table_text_and_html(_text(json_path, item, "table_body"))
        prefix = "table"
    else:  # image, chart: 3.x puts the text seen inside the image in `content`
        text, html = _text(json_path, item, "content").strip(), None
        prefix = t
    return _Mapped(
        kind="table" if t == "table" else "figure",
        text=text,
        caption=_joined(_strings(json_path, item, f"{prefix}_caption")),
        footnote=_joined(_strings(json_path, item, f"{prefix}_footnote")),
        html=html,
        img_path=_text(json_path, item, "img_path") or None,
    )


def _map_item(json_path: Path, item: _Item) -> _Mapped | None:
    t = item.type
    if t in ("image", "chart", "table"):
        return _map_visual(json_path, item)
    if t == "equation":
        latex = _text(json_path, item, "text").strip()
        return _Mapped("equation", latex, img_path=_text(json_path, item, "img_path") or None)
    if t in ("list", "index"):
        kind = "reference" if item.raw.get("sub_type") in ("ref_text", "reference_list") else "list"
        return _Mapped(kind, _joined(_strings(json_path, item, "list_items")) or "")
    if t == "code":
        return _Mapped(
            "code",
            _text(json_path, item, "code_body").strip("\n"),
            caption=_joined(_strings(json_path, item, "code_caption")),
            footnote=_joined(_strings(json_path, item, "code_footnote")),
        )
    text = _text(json_path, item, "text").strip()
    if t == "text":
        level = item.raw.get("text_level")
        is_title = isinstance(level, int) and not isinstance(level, bool) and level >= 1
        return _Mapped("title" if is_title else "text", text)
    if t in FURNITURE_TYPES:
        y_mid = (item.fractions[1] + item.fractions[3]) / 2
        return _Mapped(furniture_kind(t, y_mid), text, furniture=True)
    # page_footnote, ref_text and types newer than this importer: kept as text when they have any.
    return _Mapped(TEXT_ITEM_KINDS.get(t, "text"), text) if text else None


def _to_png(data: bytes) -> bytes | None:
    """MinerU 2.x/3.x saves crops as JPEG; quotes carry PNG, so convert anything else."""
    if data.startswith(PNG_SIGNATURE):
        return data
    try:
        pix = pymupdf.Pixmap(data)
        if pix.alpha or (pix.colorspace is not None and pix.colorspace.n not in (1, 3)):
            pix = pymupdf.Pixmap(pymupdf.csRGB, pix)  # CMYK / alpha cannot be written as plain PNG
        return pix.tobytes("png")
    except mupdf_exceptions():  # not an image MuPDF can read
        return None


def _image_file(folder: Path, img_path: str) -> bytes | None:
    path = (folder / img_path).resolve()
    # img_path is relative to the json's folder; refuse paths that climb out of it.
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        return None
    return _to_png(path.read_bytes())


def _no_pdf_geometry(page_idx: int) -> PageGeometry:
    return PageGeometry(page_idx, 0, BBOX_SCALE, BBOX_SCALE, BBOX_SCALE, BBOX_SCALE)


def _content_title(items: list[_Item], mapped: list[_Mapped | None]) -> str | None:
    for item, m in zip(items, mapped, strict=True):
        if item.page_idx > 0:
            break
        if m is not None and m.kind == "title" and item.raw.get("text_level") == 1 and len(m.text) > 3:
            return " ".join(m.text.split())
    return None


def read_content_list(json_path: Path, pdf: bytes | None = None, *, crop_dpi: int) -> ParsedDocument:
    """A MinerU 2.x/3.x content list as a ParsedDocument.

    With the PDF, page sizes come from it and boxes are scaled to PDF points; image quotes whose
    `img_path` file is missing are cropped from it at `crop_dpi`. Without it, boxes stay in the
    content list's 0–1000 scale, every page is reported as 1000 × 1000 with no known text layer,
    and a warning is logged: the file alone does not say how large its pages were."""
    json_path = Path(json_path)
    items = _items(json_path, _load(json_path))
    mapped = [_map_item(json_path, item) for item in items]
    folder = json_path.parent

    doc: pymupdf.Document | None = None
    if pdf is not None:
        try:
            doc = open_pdf(pdf, json_path.name)
        except DocumentError as exc:
            raise _fail(json_path, f"the PDF given with it: {exc.reason}") from exc
    try:
        return _build(json_path, items, mapped, folder, doc, crop_dpi)
    finally:
        if doc is not None:
            doc.close()


def _build(
    json_path: Path,
    items: list[_Item],
    mapped: list[_Mapped | None],
    folder: Path,
    doc: pymupdf.Document | None,
    crop_dpi: int,
) -> ParsedDocument:
    if doc is None:
        if not items:
            raise _fail(json_path, "no content items, and no PDF to take the pages from")
        log.warning(
            "%s: no PDF given, so boxes stay in the content list's 0–1000 page scale (pages reported as 1000 x 1000)",
            json_path,
        )
        page_count = max(it.page_idx for it in items) + 1
        geometries = [_no_pdf_geometry(i) for i in range(page_count)]
        pages = [ParsedPage(g.page_idx, g.width, g.height, 0, has_text_layer=False, ocr_used=False) for g in geometries]
        title = None
    else:
        page_count = doc.page_count
        if items and items[-1].page_idx >= page_count:
            bad = next(it for it in items if it.page_idx >= page_count)
            raise _fail(json_path, f"item {bad.index}: page_idx {bad.page_idx} but the PDF has {page_count} pages")
        geometries = [unrotate_page(doc[i]) for i in range(page_count)]
        pages = [parsed_page(doc[i], geometries[i]) for i in range(page_count)]
        title = metadata_title(doc)

    quotes = []
    for item, m in zip(items, mapped, strict=True):
        if m is None or (not m.text and m.kind not in CROPPED_KINDS):
            continue
        geometry = geometries[item.page_idx]
        bbox = geometry.to_points(item.fractions)
        png = None
        if m.kind in CROPPED_KINDS:
            png = _image_file(folder, m.img_path) if m.img_path else None
            if png is None and doc is not None:
                png = crop_png(doc[item.page_idx], bbox, crop_dpi)
        quotes.append(mapped_quote(item.page_idx, m, bbox, png))
    return ParsedDocument(
        page_count=page_count,
        title=title,
        pages=pages,
        quotes=quotes,
        page_title=_content_title(items, mapped),
    )
