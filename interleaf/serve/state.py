"""What the server holds between requests: the settings, the loaded index, and a snapshot of the
published documents and quotes, all replaced together when an ingest publishes.

The index is loaded explicitly at start (`warm_up`), so the first question is as fast as the
next; `refresh` is polled and loads everything again when the ingest group's published entries
change (an upload's ingest, `make serve`'s scheduled one, or `interleaf ingest` from a shell).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interleaf.config import Settings
from interleaf.errors import InterleafError
from interleaf.kinds import modality_of
from interleaf.retrieve.loaded_index import IndexHolder
from interleaf.scope import DocumentCatalog
from warehouse import Warehouse
from warehouse.catalog import query as query_views
from warehouse.store import INGEST_GROUP, cache_parts

log = logging.getLogger("interleaf.serve")
BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    name: str
    path: str  # where the ingest read it (server-side; never shown to clients)
    pages: int
    quotes: int
    title: str | None


@dataclass(frozen=True)
class QuoteInfo:
    quote_id: str
    doc_id: str
    page_idx: int  # 0-based
    kind: str
    text: str
    caption: str | None
    bbox: BBox
    img_path: str | None
    ocr_text: str | None
    table_md: str | None
    vlm_text: str | None

    @property
    def modality(self) -> str:
        return modality_of(self.kind)


@dataclass(frozen=True)
class Snapshot:
    """The published documents and quotes, and the scope rules over them (interleaf/scope.py)."""

    documents: dict[str, DocumentInfo]
    quotes: dict[str, QuoteInfo]
    catalog: DocumentCatalog  # names -> documents, rejected files and why
    boxes: dict[tuple[str, int], list[BBox]] = field(default_factory=dict)  # (doc_id, page) -> quote boxes

    @classmethod
    def empty(cls) -> Snapshot:
        return cls({}, {}, DocumentCatalog((), {}))


def load_snapshot(wh: Warehouse) -> Snapshot:
    catalog = DocumentCatalog.of(wh)
    if not wh.published_fingerprint("parse"):
        return Snapshot({}, {}, catalog)
    _, rows = query_views(
        wh,
        "SELECT d.doc_id, d.name, d.path, d.pages, d.title, count(q.quote_id) FROM documents d "
        "LEFT JOIN quotes q USING (doc_id) GROUP BY ALL ORDER BY d.name",
    )
    documents = {r[0]: DocumentInfo(r[0], r[1], r[2], r[3], r[5], r[4]) for r in rows}
    described = wh.published_fingerprint("describe") is not None
    texts = "t.ocr_text, t.table_md, t.vlm_text" if described else "NULL, NULL, NULL"
    join = "LEFT JOIN quote_texts t USING (quote_id)" if described else ""
    _, rows = query_views(
        wh,
        f"SELECT q.quote_id, q.doc_id, q.page_idx, q.kind, q.text, q.caption, q.bbox, q.img_path, {texts} "
        f"FROM quotes q {join} ORDER BY q.doc_id, q.page_idx, q.layout_idx",
    )
    quotes: dict[str, QuoteInfo] = {}
    boxes: dict[tuple[str, int], list[BBox]] = {}
    for r in rows:
        bbox = tuple(float(v) for v in r[6])
        quote = QuoteInfo(r[0], r[1], int(r[2]), r[3], r[4], r[5], bbox, r[7], r[8], r[9], r[10])  # type: ignore[arg-type]
        quotes[quote.quote_id] = quote
        boxes.setdefault((quote.doc_id, quote.page_idx), []).append(quote.bbox)
    return Snapshot(documents, quotes, catalog, boxes)


class PageCache:
    """Rendered page images, the most recently used kept."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Any, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> bytes | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def put(self, key: Any, value: bytes) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class ServerState:
    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.wh = Warehouse(root)
        mb = settings.serve.api.part_cache_mb
        self.parts = cache_parts(mb * 2**20) if mb else None  # the index's load fills it with the corpus's parts
        self.indexes = IndexHolder()
        self.snapshot = Snapshot.empty()
        self.pages = PageCache(settings.serve.api.page_cache)
        self.index_error: str | None = None  # why no index is loaded (nothing ingested yet, ...)
        self.loaded_at: float | None = None
        self._marker: tuple[Any, ...] | None = None
        self._refresh_lock = threading.Lock()

    def published_marker(self) -> tuple[Any, ...]:
        """What the ingest group has published: changes exactly when an ingest publishes."""
        return tuple(sorted((k, v.fingerprint, v.at) for k, v in self.wh.current().items() if v.group == INGEST_GROUP))

    def warm_up(self) -> None:
        """Load the index and the snapshot now (the server calls it before it accepts requests)."""
        with self._refresh_lock:
            self._load(self.published_marker())

    def refresh(self) -> bool:
        """Load again when an ingest has published since the last load; True when it did."""
        marker = self.published_marker()
        if marker == self._marker:
            return False
        with self._refresh_lock:
            if marker == self._marker:
                return False
            self._load(marker)
            return True

    def _load(self, marker: tuple[Any, ...]) -> None:
        from flows.plans import open_index

        started = time.perf_counter()
        snapshot = load_snapshot(self.wh)
        loaded_marker: tuple[Any, ...] | None = marker
        if not snapshot.documents:
            self.indexes.clear()
            self.index_error = "no document is ingested: upload a PDF (POST /v1/documents) or run `interleaf ingest`"
        else:
            try:
                open_index(self.wh, self.settings, self.indexes).warm_up()
                self.index_error = None
            except (InterleafError, OSError, ValueError) as exc:
                self.indexes.clear()
                self.index_error = str(exc)
                loaded_marker = None  # the next poll tries again
                log.warning("no index loaded: %s", exc)
        self.snapshot = snapshot
        self.pages.clear()
        self.loaded_at = time.time()
        # only now: a caller that finds the marker current (and so does not wait on the lock)
        # must find this snapshot in place, not the one before it (an upload's job checks it)
        self._marker = loaded_marker
        loaded = self.indexes.loaded
        quotes = len(loaded.index.corpus) if loaded else 0
        log.info(
            "loaded %d documents, %d quotes indexed in %.1f s",
            len(snapshot.documents),
            quotes,
            time.perf_counter() - started,
        )

    def ingest_plan(self) -> Any:
        from flows.plans import ingest_stages
        from pipeline.stage_task import Plan

        return Plan.of(ingest_stages(self.settings))

    def stage_progress(self, doc_id: str) -> dict[str, bool]:
        """Each ingest stage: has it committed this document (under the current fingerprints)?"""
        from pipeline.units import is_committed

        plan = self.ingest_plan()
        return {s.name: is_committed(self.wh, s, plan.fingerprints[s.name], doc_id) for s in plan.stages}

    def rejection(self, doc_id: str) -> str | None:
        """Why an ingest stage rejected this document (under the current fingerprints), if one did."""
        from pipeline.units import unit_rejected_part

        plan = self.ingest_plan()
        for stage in plan.stages:
            part = unit_rejected_part(doc_id)
            fingerprint = plan.fingerprints[stage.name]
            if self.wh.has_part("rejects", fingerprint, part):
                reasons = self.wh.read_part("rejects", fingerprint, part).column("reason").to_pylist()
                return f"{stage.name}: {'; '.join(reasons)}"
        return None

    def health(self) -> dict[str, Any]:
        loaded = self.indexes.loaded
        return {
            "documents": len(self.snapshot.documents),
            "index": {
                "loaded": loaded is not None,
                "quotes": len(loaded.index.corpus) if loaded else 0,
                "retrievers": list(loaded.index.retrievers) if loaded else [],
                "load_seconds": round(loaded.seconds, 3) if loaded else None,
                "loads": self.indexes.loads,
                "error": self.index_error,
            },
            "part_cache_mb": round(self.parts.bytes / 2**20, 1) if self.parts else None,
        }
