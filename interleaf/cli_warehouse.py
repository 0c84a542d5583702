"""`interleaf remove` and `interleaf gc`: the warehouse's documents and its disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from interleaf.cli_app import app, fail, out, state
from interleaf.errors import CatalogError, InterleafError


@app.command()
def remove(
    names: Annotated[list[str], typer.Argument(help="Document names (.pdf optional, any case) or doc_id prefixes")],
) -> None:
    """Take documents out of the views (their stored parts stay until `interleaf gc`)."""
    from interleaf.scope import DocumentCatalog, RejectedDocument, ScopeError, UnknownDocument
    from tasks.follow import published_paths, remove_documents
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
) -> None:
    """Delete the stored parts no published view references (older configurations, removed documents)."""
    from warehouse import Warehouse
    from warehouse.gc import collect

    try:
        garbage = collect(Warehouse(state.warehouse), dry_run)
    except (InterleafError, OSError) as exc:
        raise fail(exc) from exc
    verb = "would free" if dry_run else "freed"
    items = len(garbage.files) + len(garbage.folders)
    tables = ", ".join(f"{table} {n}" for table, n in sorted(garbage.by_table.items())) or "nothing"
    out.print(f"gc: {verb} {garbage.bytes:,} bytes in {items} parts ({tables})")
