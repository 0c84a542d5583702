"""The describe stage as a pure function: a document's image quotes in, `quote_texts` rows out.

Each image quote (figure, table, equation) gets the three text forms MMDocRAG keeps beside the
image (§2.1): OCR-text (from the text layer when the box holds vector text, else OCR), a Markdown
table for tables, and VLM-text from the configured describer. Every field carries its source.

Work is cached per quote *content*, in two levels, through the `Cache` passed in:
  - the reading (OCR-text, table) under a key of the crop's bytes, the box's vector words and the
    OCR config: a re-parse that yields the same crops reads nothing again;
  - the description under a key of the reading, caption, references and describer config:
    switching describer re-runs only the describer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pymupdf

from interleaf.describe.config import DescribeConfig
from interleaf.describe.ocr_cache import CachedOcr
from interleaf.describe.offline_describer import referring_sentences
from interleaf.describe.protocol import Describer, DescribeRequest
from interleaf.describe.table_structure import markdown_table
from interleaf.describe.vector_text import PageText, use_vector_text
from interleaf.fingerprint import canonical_json
from interleaf.kinds import PROSE_KINDS
from interleaf.pdf.ocr.protocol import OcrEngine, OcrError
from interleaf.pdf.render import image_rects, render_bgr
from interleaf.pdf.rows import rows_text
from interleaf.pdf.rules import Rules, raster_rules, vector_rules
from interleaf.pdf.words import Word, ocr_words, text_layer_words, words_in_box
from interleaf.stage import ContentCache, StageInput, StageOutput, source_digest
from interleaf.text.references import caption_label
from interleaf.versions import package_versions
from interleaf.vlm.openai_chat import ModelServerError
from warehouse import schemas

STAGE = "describe"


class DictCache:
    """In-memory Cache, for tests and benchmarks."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, Any]] = {}

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        return self.data.get((namespace, key))

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.data[(namespace, key)] = value


@dataclass(frozen=True)
class ReadingSettings:
    ocr_fingerprint: str
    min_conf: float = 0.5
    min_vector_words: int = 3
    max_raster_share: float = 0.3


@dataclass
class DescribeOutput:
    quote_texts: pa.Table
    rejects: list[tuple[str | None, str]] = field(default_factory=list)  # (quote_id, reason)
    read: int = 0  # quotes read (OCR / text layer) in this call, not from cache
    described: int = 0  # quotes described in this call, not from cache
    server_failures: list[str] = field(default_factory=list)  # errors of requests the model server failed


def _hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


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


def describe_document(
    quotes: list[dict[str, Any]],
    images: dict[str, bytes],
    pages: dict[int, PageText],
    render: Callable[[dict[str, Any]], np.ndarray],
    ocr: OcrEngine,
    describer: Describer,
    describer_fingerprint: str,
    reading: ReadingSettings,
    cache: ContentCache,
    kinds: Sequence[str] = ("figure", "table", "equation"),
    max_references: int = 3,
) -> DescribeOutput:
    """Describe every image quote of one document.

    quotes: the document's `quotes` rows (all kinds: text quotes supply the references);
    images: quote_id -> PNG crop bytes; pages: page_idx -> visible words and raster rects;
    render: the quote's box as a BGR image at OCR resolution (called only on a cache miss).
    """
    texts = [q["text"] for q in quotes if q["kind"] in PROSE_KINDS and not q.get("furniture") and q.get("text")]
    targets = [q for q in quotes if q["kind"] in kinds and q["quote_id"] in images]
    out = DescribeOutput(schemas.empty("quote_texts"))
    rows, requests, pending = [], [], []
    for q in targets:
        qid, png = q["quote_id"], images[q["quote_id"]]
        page = pages.get(q["page_idx"], PageText((), ()))
        words = words_in_box(page.words, tuple(q["bbox"]))
        png_sha = hashlib.sha256(png).hexdigest()
        read_key = _hash([png_sha, q["kind"], [(w.x0, w.y0, w.x1, w.y1, w.text) for w in words], reading])
        got = cache.get("read", read_key)
        if got is None:
            got = read_quote(q, words, page, lambda q=q: render(q), ocr, reading)
            out.read += 1
            if got["ocr_error"] is None:
                cache.put("read", read_key, got)
        refs = referring_sentences(caption_label(q.get("caption")), texts, max_references)
        request = DescribeRequest(
            quote_id=qid,
            kind=q["kind"],
            page_idx=q["page_idx"],
            png=png,
            caption=q.get("caption"),
            ocr_text=got["ocr_text"],
            ocr_source=got["ocr_source"],
            table_md=got["table_md"],
            references=tuple(refs),
        )
        desc_key = _hash([read_key, q.get("caption"), refs, q["kind"], q["page_idx"], describer_fingerprint])
        row = {"quote_id": qid, "doc_id": q["doc_id"], "page_idx": q["page_idx"], "kind": q["kind"]}
        row |= {k: v for k, v in got.items() if k != "ocr_error"} | {"png_sha256": png_sha, "content_key": desc_key}
        if got["ocr_error"]:
            out.rejects.append((qid, f"ocr failed: {got['ocr_error']}"))
        elif not got["ocr_text"]:
            out.rejects.append((qid, f"ocr: no text found in the {q['kind']} (text layer and {ocr.name})"))
        if q["kind"] == "table" and not got["table_md"]:
            out.rejects.append((qid, "table structure: no words to build a Markdown table from"))
        described = cache.get("describe", desc_key)
        if described is None:
            requests.append(request)
            pending.append((row, desc_key))
        else:
            row |= described
        rows.append(row)

    for (row, key), desc in zip(pending, describer.describe(requests) if requests else [], strict=True):
        if desc.server_failed:  # not the quote's fault: no reject, and the document is not stored
            out.server_failures.append(desc.error or "failed")
            continue
        value = {
            "vlm_text": desc.text.strip() if desc.text and desc.text.strip() else None,
            "vlm_sources": ",".join(desc.sources) or None,
        }
        out.described += 1
        if value["vlm_text"] is None:
            out.rejects.append((row["quote_id"], f"describe ({describer.name}): {desc.error or 'empty description'}"))
        else:
            cache.put("describe", key, value)
        row |= value
    for row in rows:
        row |= {"describer": describer.name, "model": describer.model, "prompt_hash": describer.prompt_hash}
    out.quote_texts = schemas.check("quote_texts", pa.Table.from_pylist(rows, schema=schemas.QUOTE_TEXTS))
    return out


def page_texts(
    pdf: pymupdf.Document,
    page_rows: dict[int, dict[str, Any]],
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


class DescribeStage:
    """A document's image quotes -> `quote_texts` (OCR-text, table Markdown, VLM-text)."""

    name = STAGE
    unit = "document"
    inputs = ("documents", "pages", "quotes")
    outputs = ("quote_texts",)
    upstream = ("parse",)
    sources = ("interleaf.describe", "interleaf.pdf", "interleaf.text", "interleaf.kinds", "interleaf.vlm")
    retries = 1
    retry_on: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, config: DescribeConfig) -> None:
        from interleaf.describe.registry import get_describer, get_ocr_engine, prompt_hashes

        self.settings = config
        self.ocr = get_ocr_engine(config.ocr)
        self.describer = get_describer(config)
        self._prompts = prompt_hashes(config)

    def config(self) -> dict[str, Any]:
        return {**self.settings.fingerprint_config(), "engine": self.ocr.fingerprint_config()}

    def prompt_hashes(self) -> list[str]:
        return self._prompts

    def version(self) -> dict[str, str]:
        engines = {"rapidocr": ("rapidocr", "onnxruntime"), "paddleocr": ("paddleocr",)}[self.settings.ocr.backend]
        model = {"describer_model": self.describer.model} if self.describer.model else {}
        return {**package_versions(("pymupdf", *engines)), **model}

    def namespaces(self) -> dict[str, str]:
        """Content-cache namespaces: a reading is reused while the OCR side is unchanged, a
        description while the describer side is unchanged, whatever else moves."""
        code = source_digest(tuple(self.sources))
        read = {"ocr": self.settings.ocr_fingerprint(), "engine": self.ocr.fingerprint_config(), "code": code}
        read |= package_versions(("rapidocr", "paddleocr", "pymupdf"))
        describe = {"describer": self.settings.describer_fingerprint(), "prompts": self._prompts, "code": code}
        describe |= {"model": self.describer.model or ""}
        return {"read": _hash(read)[:16], "describe": _hash(describe)[:16]}

    def run(self, given: StageInput) -> StageOutput:
        config = self.settings
        quotes = given.tables["quotes"].to_pylist()
        document = given.tables["documents"].to_pylist()[0]
        pages = {p["page_idx"]: p for p in given.tables["pages"].to_pylist()}
        targets = [q for q in quotes if q["kind"] in config.kinds and q["img_path"]]
        crops = {q["quote_id"]: given.root / q["img_path"] for q in targets}
        images = {qid: path.read_bytes() for qid, path in crops.items() if path.exists()}
        spaces = self.namespaces()
        reading = ReadingSettings(
            spaces["read"], config.ocr.min_conf, config.ocr.min_vector_words, config.ocr.max_raster_share
        )
        cache = NamespacedCache(given.cache or DictCache(), spaces)
        with pymupdf.open(Path(document["path"])) as pdf:
            out = describe_document(
                quotes,
                images,
                page_texts(
                    pdf,
                    pages,
                    {q["page_idx"] for q in targets},
                    CachedOcr(self.ocr, cache),  # its glyph readings outlive a change of describer
                    {q["page_idx"] for q in targets if q["kind"] == "table"},
                ),
                renderer(pdf, config.ocr.dpi),
                self.ocr,
                self.describer,
                spaces["describe"],
                reading,
                cache,
                kinds=config.kinds,
                max_references=config.max_references,
            )
        if out.server_failures:
            # the descriptions it did give are cached: a rerun asks for the failed ones only
            failed = out.server_failures
            raise ModelServerError(config.openai.base_url, len(failed), out.described + len(failed), failed[0])
        rejects = out.rejects + [(qid, "describe: crop file missing") for qid in crops if qid not in images]
        counts = {"quotes": out.quote_texts.num_rows, "read": out.read, "described": out.described}
        return StageOutput({"quote_texts": out.quote_texts}, rejects=rejects, counts=counts)


class NamespacedCache:
    """Files each cached value under its namespace's fingerprint: `read/<fp>`, `describe/<fp>`."""

    def __init__(self, inner: ContentCache, fingerprints: dict[str, str]) -> None:
        self.inner, self.fingerprints = inner, fingerprints

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        return self.inner.get(f"{namespace}/{self.fingerprints[namespace]}", key)

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.inner.put(f"{namespace}/{self.fingerprints[namespace]}", key, value)
