"""Runs the ingest flow for the CLI and the scheduler: plan, progress bar, report.

When every document is already parsed, described and indexed under the configured fingerprints
there is nothing to run, and the flow is not started at all (starting Prefect's temporary server
alone takes seconds); the views are pointed at those stored outputs. A file that does not open as
a PDF (no %PDF- header, damaged, encrypted, no pages) is rejected before the flow starts, so that a
batch of bad files starts neither Prefect nor a model. The report says when every input was
rejected (the CLI then exits 1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from flows import stored_work
from interleaf.cli.output import styled_line
from interleaf.config import Settings
from interleaf.errors import CatalogError, DocumentError, InterleafError
from interleaf.fingerprint import sha256_file
from interleaf.parse.config import LimitsConfig
from interleaf.parse.facts import DocumentFacts, facts_of
from interleaf.parse.stage import SourceFile, over_limits
from interleaf.runtime import interrupt, progress
from interleaf.runtime.prefect_server import ensure_prefect_api
from pipeline.context import RunContext, new_run_id
from pipeline.discover import discover_documents
from pipeline.follow import DocumentChange, Dropped, documents_to_drop
from pipeline.stage_task import Plan, UnitResult, publish, record_unchanged, run_unit
from pipeline.units import is_committed, pending, published_documents, set_aside_damaged
from warehouse import Warehouse
from warehouse.catalog import query, write_catalog_file
from warehouse.ledger import close_dead_runs
from warehouse.store import INGEST_GROUP


@dataclass
class IngestReport:
    run_id: str
    files: dict[str, str]  # path -> doc_id
    results: list[UnitResult] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    flow_started: bool = False
    warnings: list[str] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)  # doc_ids with no parsed document (rejected)
    dropped: list[Dropped] = field(default_factory=list)  # published documents this ingest took out of the views
    root: Path | None = None  # the warehouse, and the plan its stages ran: what `kept` reads
    plan: Plan | None = None
    entry: str = ""  # the stage made from the file (parse): its results count pages and rejects
    pages: dict[str, int] = field(default_factory=dict)  # path -> page count, once read

    @property
    def all_rejected(self) -> bool:
        """Every input was rejected, in this run or an earlier one: nothing of it can be searched."""
        return bool(self.files) and set(self.unusable) >= set(self.files.values())

    def of(self, stage: str) -> list[UnitResult]:
        return [r for r in self.results if r.stage == stage]

    def count(self, stage: str, status: str) -> int:
        return sum(1 for r in self.of(stage) if r.status == status)

    def kept(self) -> str:
        """What an interrupted run leaves stored, for the one line the CLI prints: read from the
        warehouse, the pages its parses saved included (flows/stored_work.py)."""
        if self.root is None or self.plan is None:
            return ""  # stopped before it knew its documents: the line's general words
        return stored_work.kept(Warehouse(self.root), self.plan, self.files, self.pages)

    @property
    def pages_parsed(self) -> int:
        return sum(r.counts.get("pages", 0) for r in self.of(self.entry))

    def print(self, console: Console) -> None:
        rate = self.pages_parsed / self.seconds if self.seconds else 0.0
        n = len(set(self.files.values()))
        console.print(
            f"run {self.run_id}: {n} documents — "
            f"{self.count(self.entry, 'ok')} parsed, {self.count(self.entry, 'cached')} unchanged, "
            f"{self.count(self.entry, 'rejected')} rejected, {len(self.failed)} failed; "
            f"{self.pages_parsed} pages parsed, {sum(r.counts.get('quotes', 0) for r in self.of(self.entry))} quotes, "
            f"{self.seconds:.1f}s ({rate:.1f} pages/s)"
        )
        stages = sorted({r.stage for r in self.results} - {self.entry})
        if stages:
            console.print(
                "  "
                + "; ".join(
                    f"{s}: {self.count(s, 'ok')} ran, {self.count(s, 'cached')} cached, "
                    f"{sum(r.rejects for r in self.of(s))} rejects"
                    for s in stages
                )
            )
        for gone in self.dropped:
            console.print(
                f"  left the views: {Path(gone.path).name} ({gone.reason}; its parts stay until `interleaf gc`)"
            )
        for warning in self.warnings:
            console.print(styled_line("warning:", "yellow", warning))
        paths = {d: p for p, d in self.files.items()}
        rejected = [r for r in self.of(self.entry) if r.status == "rejected"]
        if rejected or self.failed:
            table = Table("file", "outcome", "reason")
            for r in rejected:
                table.add_row(paths.get(r.unit, r.unit), "rejected", r.reason or "")
            for path, error in self.failed:
                table.add_row(path, "failed", error)
            console.print(table)


def _facts(paths: list[str], settings: Settings) -> dict[str, DocumentFacts | DocumentError]:
    """The files' facts (parse/facts.py), or why each cannot be parsed; read in the page workers on
    `local`, so that this process never imports PyMuPDF. A file over `parse.limits.max_file_mb` is
    not read."""
    from flows.page_work import page_work_map

    limits = settings.parse.limits
    out: dict[str, DocumentFacts | DocumentError] = {}
    to_read = []
    for path in paths:
        try:  # the size first: a file over max_file_mb is not read
            if reason := over_limits(Path(path).stat().st_size, lambda: 0, limits):  # pages: read below
                out[path] = DocumentError(path, reason)
            else:
                to_read.append(path)
        except OSError as exc:
            out[path] = DocumentError(path, f"cannot read the file: {exc}")
    page_map = page_work_map(settings, whole_document=False) if settings.executor.kind == "local" else map
    return out | dict(zip(to_read, facts_of(to_read, page_map), strict=True))


def _unopenable(facts: DocumentFacts | DocumentError, limits: LimitsConfig) -> bool:
    """The checks parse makes before any page work (a %PDF- header, PyMuPDF opens it, no password,
    pages, within `parse.limits.max_file_mb` and `max_pages`): a file failing them is rejected
    without starting Prefect or loading a model."""
    return isinstance(facts, DocumentError) or over_limits(0, lambda: facts.page_count, limits) is not None


def _reject_unopenable(
    ctx: RunContext, plan: Plan, files: dict[str, str], todo: list[str], facts: dict[str, DocumentFacts | DocumentError]
) -> list[UnitResult]:
    """Parse (that is: reject, with the reason in `rejects`) the files among `todo` that do not
    open or are over a limit."""
    results, done = [], set()
    for path, doc_id in files.items():
        if doc_id in todo and doc_id not in done and _unopenable(facts[path], ctx.settings.parse.limits):
            started = time.perf_counter()
            # parse records the reason: the one `facts` holds, or the page limit over the count in it
            source = SourceFile(path, doc_id, facts[path])
            result = run_unit(ctx, plan, plan.entry("document").name, doc_id, source=source, path=path)
            results.append(progress.unit_done(Path(path).name, result, started))
            done.add(doc_id)
    return results


def run_ingest(
    root: Path, settings: Settings, paths: list[str], force_from: str | None, sync: bool = False
) -> IngestReport:
    """`sync`: documents whose file is gone from `paths` leave the views (pipeline/follow.py)."""
    from flows.plans import ingest_stages

    started = time.perf_counter()
    wh = Warehouse(root)
    wh.remove_stale_temporaries()
    close_dead_runs(wh)
    plan = Plan.of(ingest_stages(settings))
    if settings.executor.kind == "ray":
        settings.executor.check_resources(plan.names())
    entry = plan.entry("document")
    ctx = RunContext(new_run_id(), "ingest", str(wh.root), settings, stages_from(plan, force_from))
    files = {path: sha256_file(Path(path)) for path in discover_documents(paths)}
    doc_ids = sorted(set(files.values()))
    report = IngestReport(ctx.run_id, files, root=wh.root, plan=plan, entry=entry.name)
    set_aside_damaged(wh, plan, doc_ids)  # before anything opens the views over them
    report.dropped = documents_to_drop(wh, files, paths, sync)
    change = DocumentChange(frozenset(doc_ids), frozenset(d.doc_id for d in report.dropped))
    todo_parse = pending(ctx, plan, entry, doc_ids)
    facts = _facts([p for p, d in files.items() if d in set(todo_parse)], settings)
    rejected = _reject_unopenable(ctx, plan, files, todo_parse, facts)
    gone = {r.unit for r in rejected}
    todo_parse = [d for d in todo_parse if d not in gone]
    files_left = {p: d for p, d in files.items() if d not in gone}
    docs_left = sorted(set(files_left.values()))
    later = {d for s in plan.stages[1:] for d in pending(ctx, plan, s, docs_left)}
    if not todo_parse and not later:
        publish(ctx, plan, INGEST_GROUP, units=change.apply)  # the config may point back at outputs stored earlier
        if docs_left:  # the rejected ones have their ledger rows already
            record_unchanged(ctx, plan, docs_left)
        _refresh_catalog(wh, report)
        _store_index(wh, settings, report)
        report.results = rejected + [UnitResult(entry.name, d, "cached") for d in docs_left]
        return _finish(report, wh, plan, started)

    facts |= _facts([p for p in files_left if p not in facts], settings)
    pages = report.pages = {p: 0 if isinstance(f, DocumentError) else f.page_count for p, f in facts.items()}
    # the longest documents begin first: a 400-page manual's chain (its describe alone took 584 s in
    # `make bench`) is the ingest's long pole, and the short ones fill the other workers beside it
    # (begun in path order, it started at 231 s of a 976 s ingest and ran alone for its last 350 s)
    files_left = dict(sorted(files_left.items(), key=lambda item: -pages[item[0]]))
    todo_paths = [p for p, d in files_left.items() if d in set(todo_parse)]
    # on a cluster no unit has a row of its own: the bar of all pages is all there is
    overall = len(todo_paths) > 1 or settings.executor.kind == "ray"
    bar = progress.PageProgress(sum(pages[p] for p in todo_paths), overall=overall)
    progress.set_current(bar)
    # before Prefect's server starts (seconds, longer in a new Prefect home): the command says at once
    # what it does, and a long document's pages follow as they are saved
    to_parse = {p: files[p] for p in todo_paths}
    progress.note(stored_work.starting(wh, plan, to_parse, pages, len(later - set(todo_parse))))
    report.flow_started = True
    from flows.ingest import ingest_flow, task_runner, unwritable  # Prefect: imported once the line is out

    ensure_prefect_api()
    try:
        flow = ingest_flow.with_options(task_runner=task_runner(ctx.settings))
        read = {p: f for p, f in facts.items() if isinstance(f, DocumentFacts)}
        results, report.failed = flow(ctx, plan, files_left, change, read)
        report.results = rejected + results
    except interrupt.Interrupted:  # stopped before the flow's first unit
        report.results = rejected
    finally:
        bar.close()
        progress.set_current(None)
    if (reason := unwritable(report.results)) and not interrupt.requested():
        raise InterleafError(
            f"{reason}; nothing was published, the views still show the last ingest; "
            "free some space and run the same command again"
        )
    _refresh_catalog(wh, report)
    _store_index(wh, settings, report)
    return _finish(report, wh, plan, started)


def _finish(report: IngestReport, wh: Warehouse, plan: Plan, started: float) -> IngestReport:
    parse = plan.entry("document")
    fingerprint = plan.fingerprints[parse.name]
    report.unusable = [d for d in sorted(set(report.files.values())) if not is_committed(wh, parse, fingerprint, d)]
    report.seconds = time.perf_counter() - started
    return report


def _refresh_catalog(wh: Warehouse, report: IngestReport) -> None:
    try:
        write_catalog_file(wh)
    except CatalogError as exc:  # the warehouse is intact; only the file for outside tools is stale
        report.warnings.append(str(exc))


def _store_index(wh: Warehouse, settings: Settings, report: IngestReport) -> None:
    """Build the query-time index of the corpus just published and store it
    (interleaf/retrieve/snapshot.py), so that the next cold `ask` or server reload reads one file.
    Not after an interrupt: a stop must not wait for it."""
    if interrupt.requested() or published_documents(wh) == set():
        return
    from flows.plans import open_index

    try:
        open_index(wh, settings)
    except (InterleafError, OSError, ValueError) as exc:  # as the server: the ingest is published, a question builds it
        report.warnings.append(f"query index not stored: {exc}")


def stages_from(plan: Plan, stage: str | None) -> frozenset[str]:
    """`run --from STAGE`: that stage and every stage after it in the flow."""
    if stage is None:
        return frozenset()
    names = plan.names()
    if family := [n for n in names if n.partition(":")[0] == stage and n != stage]:  # `index`: every retriever's
        return frozenset(family)
    if stage not in names:
        raise InterleafError(f"unknown stage {stage!r}; the ingest flow's stages are {', '.join(names)}")
    return frozenset(names[names.index(stage) :])


def stored_document_paths(root: Path, settings: Settings) -> list[str]:
    """Every document the views show, or whose file the stage made from it rejected, by its path."""
    from flows.plans import ingest_stages

    entry = Plan.of(ingest_stages(settings)).entry("document").name
    _, rows = query(
        Warehouse(root),
        "SELECT path FROM documents UNION SELECT path FROM rejects WHERE stage = "
        f"'{entry}' AND quote_id IS NULL AND path IS NOT NULL ORDER BY 1",
    )
    return [r[0] for r in rows if Path(r[0]).exists()]
