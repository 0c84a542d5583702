"""`interleaf remove` and `interleaf gc`: the warehouse's documents and its disk."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from interleaf.cli.app import app, fail, out, state
from interleaf.errors import CatalogError, InterleafError


@app.command()
def remove(
    names: Annotated[list[str], typer.Argument(help="Document names (.pdf optional, any case) or doc_id prefixes")],
) -> None:
    """Take documents out of the views (their stored parts stay until `interleaf gc`)."""
    from interleaf.scope import DocumentCatalog, RejectedDocument, ScopeError, UnknownDocument
    from pipeline.follow import published_paths, remove_documents
    from warehouse import Warehouse
    from warehouse.catalog import write_catalog_file

    wh = Warehouse(state.warehouse)
    catalog = DocumentCatalog.of(wh)
    paths = published_paths(wh)
    chosen: dict[str, str] = {}  # doc_id -> file
    try:
        for name in names:
            try:
                ref = catalog.resolve(name)
                chosen[ref.doc_id] = paths.get(ref.doc_id, ref.name)
            except RejectedDocument as exc:  # a rejected file leaves the views too (its reject row)
                for doc_id, path in paths.items():
                    if Path(path).name == exc.file:
                        chosen[doc_id] = path
    except (UnknownDocument, ScopeError) as exc:
        raise fail(exc) from exc
    remove_documents(wh, set(chosen))
    try:
        write_catalog_file(wh)
    except CatalogError as exc:
        out.print(f"warning: {exc}")
    for path in sorted(chosen.values()):
        out.print(f"removed from the views: {Path(path).name} (its parts stay until `interleaf gc`)")


@app.command()
def gc(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be deleted; delete nothing")] = False,
    answers_before: Annotated[
        str | None,
        typer.Option(
            "--answers-before",
            metavar="DATE",
            help="Also take out the question sets last answered before DATE (2026-11-30, or with a time: "
            "2026-11-30T18:00, local time unless it names a zone) and free their answers",
        ),
    ] = None,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact",
            help="Then merge every published table's loose parts and the ledger's into packs (an ingest "
            "does so by itself for a folder that holds many)",
        ),
    ] = False,
) -> None:
    """Delete the stored parts no published view references (older configurations, removed
    documents, a question set's answers from before it was answered again). Stored answers stay
    unless --answers-before says which to take out."""
    from warehouse import Warehouse
    from warehouse.compact import compact_published
    from warehouse.gc import collect

    try:
        before = _moment(answers_before) if answers_before is not None else None
        wh = Warehouse(state.warehouse)
        garbage = collect(wh, dry_run, before)
        if compact and not dry_run:
            with wh.locked():
                packed = compact_published(wh, wh.current(), min_loose=2)
    except (InterleafError, OSError) as exc:
        raise fail(exc) from exc
    verb = "would free" if dry_run else "freed"
    items = len(garbage.files) + len(garbage.folders)
    tables = ", ".join(f"{table} {n}" for table, n in sorted(garbage.by_table.items())) or "nothing"
    if answers_before is not None:
        sets = {qset for qsets in garbage.question_sets.values() for qset in qsets}
        where = ", ".join(f"{group} {len(q)}" for group, q in sorted(garbage.question_sets.items()))
        taken = "would take" if dry_run else "took"
        out.print(
            f"gc: {taken} {len(sets)} question sets answered before {answers_before} out of the views"
            + (f" ({where})" if where else "")
        )
    out.print(f"gc: {verb} {garbage.bytes:,} bytes in {items} parts ({tables})")
    if compact and not dry_run:
        out.print(
            f"gc: packed {packed.parts} parts into {packed.packs_written} packs in {len(packed.folders)} folders; "
            f"{packed.files_removed} files removed"
        )


def _moment(text: str) -> float:
    """Seconds since the epoch of an ISO date or date and time; local time unless it names a zone."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InterleafError(
            f"--answers-before {text!r}: not a date (2026-11-30) or date and time (2026-11-30T18:00)"
        ) from exc
    return moment.timestamp()  # a naive datetime is read as local time
