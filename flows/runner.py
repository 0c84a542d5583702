"""Runs the ingest flow for the CLI and the scheduler: plan, progress bar, report.

When every document is already parsed, described and indexed under the configured fingerprints
there is nothing to run, and the flow is not started at all (starting Prefect's temporary server
alone takes seconds); the views are pointed at those stored outputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf
from rich.console import Console
from rich.table import Table

from interleaf import progress
from interleaf.config import Settings
from interleaf.fingerprint import sha256_file
from tasks.context import RunContext, new_run_id
from tasks.describe_task import describe_pending, describe_unchanged
from tasks.discover import discover_documents
from tasks.index_task import index_pending, index_unchanged
from tasks.parse_task import ParseSummary, parse_pending, parse_unchanged
from tasks.publish_task import publish_documents
from warehouse import Warehouse
from warehouse.catalog import query


@dataclass
class IngestReport:
    run_id: str
    summaries: list[ParseSummary] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    flow_started: bool = False

    @property
    def pages_parsed(self) -> int:
        return sum(s.pages for s in self.summaries)

    def count(self, status: str) -> int:
        return sum(1 for s in self.summaries if s.status == status)

    def print(self, console: Console) -> None:
        rate = self.pages_parsed / self.seconds if self.seconds else 0.0
        console.print(
            f"run {self.run_id}: {len(self.summaries) + len(self.failed)} documents — "
            f"{self.count('ok')} parsed, {self.count('cached')} unchanged, {self.count('rejected')} rejected, "
            f"{len(self.failed)} failed; {self.pages_parsed} pages parsed, "
            f"{sum(s.quotes for s in self.summaries)} quotes, {self.seconds:.1f}s ({rate:.1f} pages/s)"
        )
        rejected = [s for s in self.summaries if s.status == "rejected"]
        if rejected or self.failed:
            table = Table("file", "outcome", "reason")
            for s in rejected:
                table.add_row(s.path, "rejected", s.reason or "")
            for path, error in self.failed:
                table.add_row(path, "failed", error)
            console.print(table)


def _page_count(path: str) -> int:
    try:
        with pymupdf.open(path) as doc:
            return doc.page_count
    except Exception:
        return 0


def run_ingest(root: Path, settings: Settings, paths: list[str], force_from: str | None) -> IngestReport:
    from flows.ingest import IngestError, ingest_flow, stages_from

    started = time.perf_counter()
    wh = Warehouse(root)
    wh.remove_stale_temporaries()
    ctx = RunContext(new_run_id(), "ingest", str(wh.root), settings, stages_from(force_from))
    files = discover_documents(paths)
    hashes = {path: sha256_file(Path(path)) for path in files}
    doc_ids = sorted(set(hashes.values()))
    todo = parse_pending(ctx, hashes)
    report = IngestReport(ctx.run_id)
    if not todo and not describe_pending(ctx, doc_ids):
        publish_documents(ctx)  # the config may point back at outputs stored earlier
        if not index_pending(ctx):
            parse_unchanged(ctx, doc_ids)
            describe_unchanged(ctx, doc_ids)
            index_unchanged(ctx)
            report.summaries = [ParseSummary(p, hashes[p], "cached", 0, 0) for p in files]
            report.seconds = time.perf_counter() - started
            return report

    bar = progress.PageProgress(sum(_page_count(p) for p in todo))
    progress.set_current(bar)
    report.flow_started = True
    try:
        report.summaries = ingest_flow(ctx, files)
    except IngestError as exc:
        report.failed = [(path, str(error)) for path, error in exc.failures]
    finally:
        bar.close()
        progress.set_current(None)
    report.seconds = time.perf_counter() - started
    return report


def stored_document_paths(root: Path) -> list[str]:
    """Every document the warehouse knows under the current parse fingerprint, by its path."""
    _, rows = query(
        Warehouse(root),
        "SELECT path FROM documents UNION SELECT path FROM rejects WHERE stage = 'parse' AND quote_id IS NULL "
        "AND path IS NOT NULL ORDER BY 1",
    )
    return [r[0] for r in rows if Path(r[0]).exists()]
