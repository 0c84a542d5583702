"""parse_task: one document through the parse stage, with the warehouse cache and the ledger.

Cache: a document is done for a parse fingerprint when its `documents` part (written last, so it
commits the others) or its document-level `rejects` part exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from prefect import task
from prefect.cache_policies import NO_CACHE

from interleaf import progress
from interleaf.errors import DocumentError
from interleaf.executor import page_map
from interleaf.fingerprint import sha256_bytes, stage_fingerprint
from interleaf.parse.config import ParseConfig
from interleaf.parse.protocol import Parser
from interleaf.parse.registry import get_parser
from interleaf.parse.stage import STAGE, TABLES, DocumentInput, parse_document
from tasks.context import RunContext
from warehouse import Warehouse, schemas
from warehouse.ledger import Ledger, now


@dataclass(frozen=True)
class ParseSummary:
    path: str
    doc_id: str
    status: str  # ok, cached, rejected
    pages: int
    quotes: int
    reason: str | None = None


def parse_fingerprint(parser: Parser) -> str:
    return stage_fingerprint(STAGE, {"backend": parser.name, **parser.fingerprint_config()}, parser.code_version)


def is_parsed(wh: Warehouse, fingerprint: str, doc_id: str) -> bool:
    return wh.has_part("documents", fingerprint, doc_id) or wh.has_part("rejects", fingerprint, doc_id)


def parse_pending(ctx: RunContext, hashes: dict[str, str]) -> list[str]:
    """The paths among `hashes` (path -> doc_id) not parsed under the current parse fingerprint."""
    wh = Warehouse(ctx.warehouse)
    fingerprint = parse_fingerprint(get_parser(ctx.settings.parse))
    return [p for p, doc_id in hashes.items() if ctx.forced(STAGE) or not is_parsed(wh, fingerprint, doc_id)]


def parse_unchanged(ctx: RunContext, doc_ids: list[str]) -> None:
    """Nothing to parse: one `cached` ledger row for the run."""
    parser = get_parser(ctx.settings.parse)
    record = ctx.record(
        STAGE, parse_fingerprint(parser), ctx.settings.parse.fingerprint_config(), parser.code_version, doc_ids, "all"
    )
    Ledger(Warehouse(ctx.warehouse)).finish(record, "cached")


def rejects_table(
    fingerprint: str, run_id: str, doc_id: str, path: str, items: list[tuple[str | None, str]]
) -> pa.Table:
    created = now()
    return pa.Table.from_pylist(
        [
            {
                "stage": STAGE,
                "doc_id": doc_id,
                "quote_id": quote,
                "path": path,
                "reason": reason,
                "fingerprint": fingerprint,
                "run_id": run_id,
                "created_at": created,
            }
            for quote, reason in items
        ],
        schema=schemas.REJECTS,
    )


def parse_one(ctx: RunContext, path: str) -> ParseSummary:
    config: ParseConfig = ctx.settings.parse
    wh = Warehouse(ctx.warehouse)
    parser = get_parser(config)
    fingerprint = parse_fingerprint(parser)
    data = Path(path).read_bytes()
    doc_id = sha256_bytes(data)
    ledger = Ledger(wh)
    record = ctx.record(STAGE, fingerprint, config.fingerprint_config(), parser.code_version, [doc_id], doc_id[:16])
    if not ctx.forced(STAGE) and is_parsed(wh, fingerprint, doc_id):
        ledger.finish(record, "cached")
        return ParseSummary(path, doc_id, "cached", 0, 0)

    ledger.start(record)
    doc = DocumentInput(doc_id=doc_id, name=Path(path).name, path=str(Path(path).resolve()), data=data)
    mapper = page_map(config.workers, on_result=lambda pages: progress.advance(len(pages)))
    try:
        out = parse_document(doc, parser, fingerprint, mapper)
    except DocumentError as exc:
        wh.write_part(
            "rejects",
            fingerprint,
            doc_id,
            rejects_table(fingerprint, ctx.run_id, doc_id, doc.path, [(None, exc.reason)]),
        )
        ledger.finish(record, "rejected")
        return ParseSummary(path, doc_id, "rejected", 0, 0, exc.reason)
    except Exception as exc:
        ledger.fail(record, exc)
        raise

    for relpath, blob in out.files.items():
        wh.write_file(relpath, blob)
    wh.write_part("pages", fingerprint, doc_id, out.pages)
    wh.write_part("quotes", fingerprint, doc_id, out.quotes)
    wh.write_part(
        "rejects", fingerprint, f"{doc_id}.pages", rejects_table(fingerprint, ctx.run_id, doc_id, doc.path, out.rejects)
    )
    wh.write_part("documents", fingerprint, doc_id, out.documents)  # commits the document
    wh.part_path("rejects", fingerprint, doc_id).unlink(missing_ok=True)  # an earlier rejection
    ledger.finish(record, "ok", rows=out.quotes.num_rows)
    return ParseSummary(path, doc_id, "ok", out.page_count, out.quotes.num_rows)


@task(name="parse", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE, log_prints=False)
def parse_task(ctx: RunContext, path: str) -> ParseSummary:
    return parse_one(ctx, path)


def publish_parse(ctx: RunContext) -> str:
    """Make this run's parse fingerprint the one the views show."""
    fingerprint = parse_fingerprint(get_parser(ctx.settings.parse))
    Warehouse(ctx.warehouse).set_current(STAGE, fingerprint, TABLES)
    return fingerprint
