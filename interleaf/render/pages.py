"""Page images for the rendered answers, made with PyMuPDF.

A report shows each cited page once, small: 80 dpi, as a PNG of 64 colours (a text-heavy letter page
~65 KB, half a JPEG's size at quality 60 and sharper; photos keep a light dither), and it draws each
quote's box over it in the browser (`PageImage.box_percent`), so one image serves every
quote on the page. `render_page(..., boxes=...)` draws boxes into the image itself, for places with
no overlay (a PNG written to disk, a terminal image viewer).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Literal

from PIL import Image

from interleaf.pdf.mupdf import pymupdf
from interleaf.render.view import BBox, PageImage

ImageFormat = Literal["jpeg", "png"]
_BOX_COLOUR = (0.88, 0.19, 0.12)


def render_page(
    pdf_path: str | Path,
    page_idx: int,
    *,
    dpi: int = 80,
    fmt: ImageFormat = "png",
    palette: int | None = 64,
    boxes: Iterable[BBox] = (),
    jpeg_quality: int = 60,
) -> PageImage:
    """Page `page_idx` (0-based) as shown (rotation applied); `boxes` (stored, unrotated PDF points) drawn on it.

    `palette`: a PNG's colours (None: full colour). Raises FileNotFoundError or OSError when the PDF
    is missing or cannot be opened."""
    path = Path(pdf_path)
    if not path.is_file():
        raise FileNotFoundError(f"no PDF at {path}")
    try:
        doc = pymupdf.open(path)
    except (pymupdf.FileDataError, pymupdf.FileNotFoundError) as exc:
        raise OSError(f"cannot open {path}: {exc}") from exc
    with doc:
        if doc.needs_pass:
            raise OSError(f"{path} is encrypted")
        page = doc[page_idx]
        matrix = page.rotation_matrix
        for box in boxes:
            # draw_rect takes unrotated page coordinates, as stored
            page.draw_rect(pymupdf.Rect(box), color=_BOX_COLOUR, width=2, overlay=True)
        pixmap = page.get_pixmap(dpi=dpi, alpha=False)
        if fmt == "jpeg":
            data = pixmap.tobytes("jpeg", jpg_quality=jpeg_quality)
        elif palette is None:
            data = pixmap.tobytes("png")
        else:
            image = Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
            buffer = io.BytesIO()
            image.quantize(palette, method=Image.Quantize.FASTOCTREE).save(buffer, "PNG", optimize=True)
            data = buffer.getvalue()
        return PageImage(
            data=data,
            width=page.rect.width,
            height=page.rect.height,
            matrix=(matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f),
        )


class PdfPages:
    """A `PageLoader` over PDFs found by document id; each page is rendered once and kept."""

    def __init__(
        self,
        pdf_paths: Mapping[str, str | Path] | Callable[[str], str | Path | None],
        *,
        dpi: int = 80,
        fmt: ImageFormat = "png",
        palette: int | None = 64,
    ) -> None:
        self._find = pdf_paths.get if isinstance(pdf_paths, Mapping) else pdf_paths
        self.dpi = dpi
        self.fmt = fmt
        self.palette = palette
        self._cache: dict[tuple[str, int], PageImage] = {}

    def __call__(self, doc_id: str, page_idx: int) -> PageImage:
        key = (doc_id, page_idx)
        if key not in self._cache:
            path = self._find(doc_id)
            if path is None:
                raise FileNotFoundError(f"no PDF known for document {doc_id}")
            self._cache[key] = render_page(path, page_idx, dpi=self.dpi, fmt=self.fmt, palette=self.palette)
        return self._cache[key]
