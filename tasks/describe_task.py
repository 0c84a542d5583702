"""describe_task: one document's image quotes through the describe stage, with cache and ledger.

A document is done for a describe fingerprint when its `quote_texts` part exists (written last;
it commits the document's describe rejects). The fingerprint covers the parse fingerprint (the
quote ids and crops it reads), the OCR and describer config and the prompt; below it, each
quote's reading and description are cached by content (see interleaf/describe/stage.py), so a
new fingerprint recomputes only what actually changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pymupdf
from prefect import task
from prefect.cache_policies import NO_CACHE

from interleaf.describe.config import DescribeConfig
from interleaf.describe.registry import get_describer, get_ocr_engine, prompt_hashes
from interleaf.describe.stage import STAGE, TABLES, ReadingSettings, describe_document
from interleaf.describe.vector_text import PageText
from interleaf.fingerprint import stage_fingerprint
from interleaf.parse.registry import get_parser
from interleaf.parse.words import text_layer_words
from tasks.context import RunContext
from tasks.parse_task import parse_fingerprint
from warehouse import Warehouse, schemas
from warehouse.ledger import Ledger, now

CODE_VERSION = "describe-1"


@dataclass(frozen=True)
class DescribeSummary:
    doc_id: str
    status: str  # ok, cached, skipped
    quotes: int = 0
    read: int = 0  # read by OCR / text layer in this run (not from the content cache)
    described: int = 0
    rejects: int = 0


def ocr_fingerprint(config: DescribeConfig) -> str:
    return stage_fingerprint("describe.read", config.ocr_fingerprint(), CODE_VERSION)


def describer_fingerprint(config: DescribeConfig) -> str:
    return stage_fingerprint(
        "describe.vlm", config.describer_fingerprint(), CODE_VERSION, prompt_hashes=prompt_hashes(config)
    )


def describe_fingerprint(config: DescribeConfig, parse_fp: str) -> str:
    return stage_fingerprint(
        STAGE, config.fingerprint_config(), CODE_VERSION, upstream=[parse_fp], prompt_hashes=prompt_hashes(config)
    )


def rejects_table(
    fingerprint: str, run_id: str, doc_id: str, path: str, items: list[tuple[str | None, str]]
) -> pa.Table:
    created = now()
    rows = [
        {"stage": STAGE, "doc_id": doc_id, "quote_id": qid, "path": path, "reason": reason}
        | {"fingerprint": fingerprint, "run_id": run_id, "created_at": created}
        for qid, reason in items
    ]
    return pa.Table.from_pylist(rows, schema=schemas.REJECTS)


def is_described(wh: Warehouse, fingerprint: str, doc_id: str) -> bool:
    return wh.has_part("quote_texts", fingerprint, doc_id)


def describe_pending(ctx: RunContext, doc_ids: list[str]) -> list[str]:
    """The parsed documents among `doc_ids` with no `quote_texts` under the current describe
    fingerprint (cheap: file checks only). Documents rejected at parse have nothing to describe."""
    wh = Warehouse(ctx.warehouse)
    parse_fp = parse_fingerprint(get_parser(ctx.settings.parse))
    fingerprint = describe_fingerprint(ctx.settings.describe, parse_fp)
    return [
        d
        for d in doc_ids
        if wh.has_part("documents", parse_fp, d) and (ctx.forced(STAGE) or not is_described(wh, fingerprint, d))
    ]


def describe_unchanged(ctx: RunContext, doc_ids: list[str]) -> None:
    """Nothing to describe: one `cached` ledger row for the run, as parse and index record."""
    config: DescribeConfig = ctx.settings.describe
    fingerprint = describe_fingerprint(config, parse_fingerprint(get_parser(ctx.settings.parse)))
    record = ctx.record(STAGE, fingerprint, config.fingerprint_config(), CODE_VERSION, doc_ids, "all")
    Ledger(Warehouse(ctx.warehouse)).finish(record, "cached")


class WarehouseCache:
    """Content-addressed JSON records under <root>/cache/describe/<namespace>/<fp>/<key>.json."""

    def __init__(self, wh: Warehouse, fingerprints: dict[str, str]) -> None:
        self.wh, self.fingerprints = wh, fingerprints

    def _rel(self, namespace: str, key: str) -> str:
        return f"cache/describe/{namespace}/{self.fingerprints[namespace]}/{key[:2]}/{key}.json"

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        path = self.wh.root / self._rel(namespace, key)
        return json.loads(path.read_text()) if path.exists() else None

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.wh.write_file(self._rel(namespace, key), json.dumps(value, sort_keys=True).encode())


def page_texts(pdf: pymupdf.Document, page_rows: dict[int, dict[str, Any]], wanted: set[int]) -> dict[int, PageText]:
    """Visible words and raster image rectangles of the pages holding image quotes. Pages read by
    OCR at parse time (no usable text layer) contribute no words: their text is in the pixels."""
    out = {}
    for idx in sorted(wanted):
        page = pdf[idx]
        info = page_rows.get(idx, {})
        words = []
        if info.get("has_text_layer", True) and not info.get("ocr_used", False):
            words, _hidden = text_layer_words(page)
        rects = tuple(tuple(float(v) for v in img["bbox"]) for img in page.get_image_info())
        out[idx] = PageText(tuple(words), rects)  # type: ignore[arg-type]
    return out


def renderer(pdf: pymupdf.Document, dpi: int):
    def render(quote: dict[str, Any]) -> np.ndarray:
        page = pdf[quote["page_idx"]]
        clip = pymupdf.Rect(quote["bbox"]) & page.rect
        pix = page.get_pixmap(clip=clip, dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
        rgb = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
        return np.ascontiguousarray(rgb[:, :, ::-1])  # OCR engines take BGR

    return render


def describe_one(ctx: RunContext, doc_id: str) -> DescribeSummary:
    config: DescribeConfig = ctx.settings.describe
    wh = Warehouse(ctx.warehouse)
    parse_fp = parse_fingerprint(get_parser(ctx.settings.parse))
    fingerprint = describe_fingerprint(config, parse_fp)
    if not wh.has_part("documents", parse_fp, doc_id):
        return DescribeSummary(doc_id, "skipped")  # rejected at parse: nothing to describe
    ledger = Ledger(wh)
    record = ctx.record(STAGE, fingerprint, config.fingerprint_config(), CODE_VERSION, [doc_id], doc_id[:16])
    if not ctx.forced(STAGE) and is_described(wh, fingerprint, doc_id):
        ledger.finish(record, "cached")
        return DescribeSummary(doc_id, "cached")

    ledger.start(record)
    try:
        quotes = wh.read_part("quotes", parse_fp, doc_id).to_pylist()
        document = wh.read_part("documents", parse_fp, doc_id).to_pylist()[0]
        pages = {p["page_idx"]: p for p in wh.read_part("pages", parse_fp, doc_id).to_pylist()}
        targets = [q for q in quotes if q["kind"] in config.kinds and q["img_path"]]
        images = {
            q["quote_id"]: (wh.root / q["img_path"]).read_bytes() for q in targets if (wh.root / q["img_path"]).exists()
        }
        cache = WarehouseCache(wh, {"read": ocr_fingerprint(config), "describe": describer_fingerprint(config)})
        reading = ReadingSettings(
            ocr_fingerprint(config), config.ocr.min_conf, config.ocr.min_vector_words, config.ocr.max_raster_share
        )
        with pymupdf.open(Path(document["path"])) as pdf:
            out = describe_document(
                quotes,
                images,
                page_texts(pdf, pages, {q["page_idx"] for q in targets}),
                renderer(pdf, config.ocr.dpi),
                get_ocr_engine(config.ocr),
                get_describer(config),
                describer_fingerprint(config),
                reading,
                cache,
                kinds=config.kinds,
                max_references=config.max_references,
            )
    except Exception as exc:
        ledger.fail(record, exc)
        raise
    rejects = out.rejects + [
        (q["quote_id"], "describe: crop file missing") for q in targets if q["quote_id"] not in images
    ]
    wh.write_part(
        "rejects", fingerprint, doc_id, rejects_table(fingerprint, ctx.run_id, doc_id, document["path"], rejects)
    )
    wh.write_part("quote_texts", fingerprint, doc_id, out.quote_texts)  # commits the document
    ledger.finish(record, "ok", rows=out.quote_texts.num_rows)
    return DescribeSummary(doc_id, "ok", out.quote_texts.num_rows, out.read, out.described, len(rejects))


@task(name="describe", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE, log_prints=False)
def describe_task(ctx: RunContext, doc_id: str) -> DescribeSummary:
    return describe_one(ctx, doc_id)


def publish_describe(ctx: RunContext) -> str:
    """Make this run's describe fingerprint the one the views show."""
    parse_fp = parse_fingerprint(get_parser(ctx.settings.parse))
    fingerprint = describe_fingerprint(ctx.settings.describe, parse_fp)
    Warehouse(ctx.warehouse).set_current(STAGE, fingerprint, TABLES)
    return fingerprint
