"""index_task: every configured retriever over the stored quotes, with the warehouse cache and ledger.

One ledger record per retriever: `ok` with the number of newly encoded quotes, or `cached`.

A manifest per retriever (its fingerprint, the parse and describe fingerprints it was built over,
the documents it covers) makes the unchanged case cost a directory listing: an `interleaf ingest`
of unchanged folders must not read the quotes, load a model or hash every text (issue 2 wants the
second ingest under 10% of the first).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pyarrow as pa
from prefect import task
from prefect.cache_policies import NO_CACHE

from interleaf.index.config import RetrieverConfig
from interleaf.index.protocol import Retriever
from interleaf.index.registry import get_retriever
from interleaf.index.stage import (
    LoadedIndex,
    corpus_for,
    index_document,
    is_current,
    load_index,
    retriever_fingerprint,
    split_by_document,
    stage_name,
)
from tasks.context import RunContext
from warehouse import Warehouse, schemas
from warehouse.catalog import connect, write_catalog_file
from warehouse.ledger import Ledger


@dataclass(frozen=True)
class IndexSummary:
    retriever: str
    fingerprint: str
    status: str  # ok, cached
    documents: int
    encoded: int
    seconds: float


def read_inputs(wh: Warehouse) -> tuple[pa.Table, pa.Table, pa.Table | None]:
    """Quotes, documents and (when the describe stage exists) quote_texts, as the views show them."""
    con = connect(wh)
    try:
        quotes = con.sql("SELECT * FROM quotes").to_arrow_table()
        documents = con.sql("SELECT * FROM documents").to_arrow_table()
        quote_texts = con.sql("SELECT * FROM quote_texts").to_arrow_table() if "quote_texts" in schemas.TABLES else None
    finally:
        con.close()
    return _table(quotes), _table(documents), _table(quote_texts) if quote_texts is not None else None


def _table(x: pa.Table | pa.RecordBatchReader) -> pa.Table:
    return x.read_all() if isinstance(x, pa.RecordBatchReader) else x


def upstream_state(wh: Warehouse) -> dict[str, object]:
    """What an index is built over: the current parse and describe outputs and the stored documents."""
    state = wh.current()
    parse = state["parse"].fingerprint if "parse" in state else ""
    describe = state["describe"].fingerprint if "describe" in state else ""
    # a document described later under the same fingerprint (a failed describe retried) changes the input
    return {
        "parse": parse,
        "describe": describe,
        "documents": _parts(wh, "documents", parse),
        "described": _parts(wh, "quote_texts", describe),
    }


def _parts(wh: Warehouse, table: str, fingerprint: str) -> list[str]:
    return sorted(p.stem for p in (wh.root / table / fingerprint).glob("*.parquet")) if fingerprint else []


def _manifest_path(name: str, fingerprint: str) -> str:
    return f"_state/index/{fingerprint}/{name}.json"


def manifest_matches(wh: Warehouse, name: str, fingerprint: str, upstream: dict[str, object]) -> bool:
    path = wh.root / _manifest_path(name, fingerprint)
    return path.exists() and json.loads(path.read_text()) == upstream


def _cached_record(ctx: RunContext, wh: Warehouse, spec: RetrieverConfig, retriever: Retriever, fp: str) -> None:
    record = ctx.record(stage_name(spec), fp, retriever.fingerprint_config(), retriever.code_version, [], spec.name)
    Ledger(wh).finish(record, "cached")


def index_pending(ctx: RunContext) -> list[str]:
    """Retrievers with work to do over the current parse and describe outputs (cheap: manifests only)."""
    wh = Warehouse(ctx.warehouse)
    config = ctx.settings.index
    upstream = upstream_state(wh)
    return [
        spec.name
        for spec in config.retrievers
        if ctx.forced("index")
        or not manifest_matches(wh, spec.name, retriever_fingerprint(get_retriever(spec), config), upstream)
    ]


def index_unchanged(ctx: RunContext) -> None:
    """Nothing to index: record each retriever as cached and point the views at its stored index."""
    wh = Warehouse(ctx.warehouse)
    config = ctx.settings.index
    for spec in config.retrievers:
        retriever = get_retriever(spec)
        fingerprint = retriever_fingerprint(retriever, config)
        _cached_record(ctx, wh, spec, retriever, fingerprint)
        wh.set_current(stage_name(spec), fingerprint, (retriever.table,))


def index_all(ctx: RunContext) -> list[IndexSummary]:
    wh = Warehouse(ctx.warehouse)
    config = ctx.settings.index
    upstream = upstream_state(wh)
    todo: list[tuple[RetrieverConfig, Retriever, str]] = []
    summaries = []
    for spec in config.retrievers:
        retriever = get_retriever(spec)  # cheap: models load on first encode
        fingerprint = retriever_fingerprint(retriever, config)
        if not ctx.forced("index") and manifest_matches(wh, spec.name, fingerprint, upstream):
            _cached_record(ctx, wh, spec, retriever, fingerprint)
            wh.set_current(stage_name(spec), fingerprint, (retriever.table,))
            summaries.append(IndexSummary(spec.name, fingerprint, "cached", 0, 0, 0.0))
        else:
            todo.append((spec, retriever, fingerprint))
    if not todo:
        return summaries
    quotes, documents, quote_texts = read_inputs(wh)
    ledger = Ledger(wh)
    for spec, retriever, fingerprint in todo:
        started = time.perf_counter()
        by_doc = split_by_document(corpus_for(spec, config, quotes, documents, quote_texts))
        record = ctx.record(
            stage_name(spec),
            fingerprint,
            retriever.fingerprint_config(),
            retriever.code_version,
            sorted(by_doc),
            spec.name,
        )
        done, encoded = 0, 0
        for doc_id, corpus in by_doc.items():
            stored = (
                wh.read_part(retriever.table, fingerprint, doc_id)
                if wh.has_part(retriever.table, fingerprint, doc_id)
                else None
            )
            if not ctx.forced("index") and is_current(retriever, corpus, stored):
                continue
            if not done:
                ledger.start(record)
            try:
                rows = index_document(retriever, corpus, None if ctx.forced("index") else stored, str(wh.root))
            except Exception as exc:
                ledger.fail(record, exc)
                raise
            wh.write_part(retriever.table, fingerprint, doc_id, rows)
            done += 1
            encoded += getattr(retriever, "encoded_count", rows.num_rows)
        ledger.finish(record, "ok" if done else "cached", rows=encoded)
        wh.set_current(stage_name(spec), fingerprint, (retriever.table,))
        wh.write_file(_manifest_path(spec.name, fingerprint), json.dumps(upstream, sort_keys=True).encode())
        summaries.append(
            IndexSummary(
                spec.name, fingerprint, "ok" if done else "cached", done, encoded, time.perf_counter() - started
            )
        )
    return summaries


def open_index(wh: Warehouse, settings_index: object, only: list[str] | None = None) -> LoadedIndex:
    """Load every configured retriever from its stored rows (for eval, bench and serving)."""
    from interleaf.index.config import IndexConfig

    config: IndexConfig = settings_index  # type: ignore[assignment]
    quotes, documents, quote_texts = read_inputs(wh)
    rows_of = {}
    for spec in config.retrievers:
        if only is not None and spec.name not in only:
            continue
        retriever = get_retriever(spec)
        rows_of[spec.name] = wh.read_table(retriever.table, retriever_fingerprint(retriever, config))
    return load_index(config, quotes, documents, quote_texts, rows_of, only)


@task(name="index", cache_policy=NO_CACHE, log_prints=False)
def index_task(ctx: RunContext) -> list[IndexSummary]:
    summaries = index_all(ctx)
    write_catalog_file(Warehouse(ctx.warehouse))
    return summaries
