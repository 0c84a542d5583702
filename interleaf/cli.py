"""`interleaf`: ingest, query and rerun from the command line."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from interleaf.config import Settings, load_settings, model_overrides
from interleaf.errors import InterleafError, ReadOnlyQueryError
from interleaf.questions.stage import read_question_file
from warehouse.store import resolve_root

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
console = Console(stderr=True)
out = Console()


class State:
    warehouse: Path
    settings: Settings


state = State()


def prefect_environment(root: Path) -> None:
    """Prefect keeps its own database; keep it beside the warehouse, quiet and offline."""
    os.environ.setdefault("PREFECT_HOME", str(root.parent / ".prefect"))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # Prefect gives its temporary server 20 s to start; a loaded 2-core machine can need more.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_LOCAL_STORAGE_PATH", str(root.parent / ".prefect" / "storage"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)


@app.callback()
def main(
    warehouse: Annotated[str | None, typer.Option(help="Warehouse folder [env INTERLEAF_WAREHOUSE]")] = None,
    config: Annotated[str | None, typer.Option(help="YAML config (default configs/default.yaml)")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config value: parse.backend=mineru")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="A model preset from configs/models.yaml, e.g. qwen2.5-vl-7b")
    ] = None,
) -> None:
    try:
        overrides = (model_overrides(model) if model else []) + list(set_ or [])
        state.settings = load_settings(config, overrides)
    except InterleafError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    state.warehouse = resolve_root(warehouse or state.settings.warehouse)
    prefect_environment(state.warehouse)


def _fail(exc: Exception) -> typer.Exit:
    console.print(f"[red]error:[/red] {exc}")
    return typer.Exit(1)


@app.command()
def ingest(paths: Annotated[list[str], typer.Argument(help="PDF files or folders")]) -> None:
    """Parse new and changed documents into the warehouse (unchanged ones are skipped)."""
    from flows.runner import run_ingest

    try:
        report = run_ingest(state.warehouse, state.settings, paths, force_from=None)
    except InterleafError as exc:
        raise _fail(exc) from exc
    report.print(out)
    if report.failed:
        raise typer.Exit(1)


@app.command("run")
def rerun(
    from_: Annotated[str, typer.Option("--from", help="First stage to recompute (ingest or answer flow)")],
    paths: Annotated[
        list[str] | None, typer.Argument(help="Ingest stages: limit to these files (default: every stored document)")
    ] = None,
    qa: Annotated[
        str | None, typer.Option("--qa", help="Answer stages: this question file (default: every stored question set)")
    ] = None,
) -> None:
    """Recompute STAGE and every stage after it from the stored output of the stage before it."""
    from flows.ingest import ingest_stages
    from flows.runner import run_ingest, stored_document_paths

    ingest_names = {s.name for s in ingest_stages(state.settings)} | {"index"}
    try:
        if from_ in ingest_names:
            targets = paths or stored_document_paths(state.warehouse)
            report = run_ingest(state.warehouse, state.settings, targets, force_from=from_)
            report.print(out)
            if report.failed:
                raise typer.Exit(1)
            return
        from flows.query import run_queries, stored_question_sets

        qsets = [read_question_file(qa)] if qa else stored_question_sets(state.warehouse)
        for qset in qsets:
            run = run_queries(state.warehouse, state.settings, qset, [state.settings.retrieve.scope], force_from=from_)
            _print_query_run(run)
    except (InterleafError, ValueError) as exc:
        raise _fail(exc) from exc


def _print_query_run(run: Any) -> None:
    ran = sum(r.status == "ok" for r in run.results)
    out.print(
        f"run {run.run_id}: question set {run.qset.qset_id} ({len(run.qset.rows)} questions, {run.qset.source}) — "
        f"{ran} stage runs, {run.seconds:.1f}s" + ("" if run.flow_started else " (everything stored: nothing ran)")
    )


@app.command()
def answer(
    qa: Annotated[str, typer.Option("--qa", help="A question file (JSON Lines: id, question, doc, ...)")],
    scope: Annotated[str | None, typer.Option(help="doc or corpus (default: retrieve.scope)")] = None,
) -> None:
    """Answer a whole question file through the answer flow, storing every stage's output."""
    from flows.query import run_queries

    try:
        qset = read_question_file(qa)
        run = run_queries(state.warehouse, state.settings, qset, [scope or state.settings.retrieve.scope])
    except (InterleafError, ValueError) as exc:
        raise _fail(exc) from exc
    _print_query_run(run)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return value


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A read-only SQL query over the warehouse views")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as a JSON array")] = False,
) -> None:
    """Query the warehouse read-only (SELECT, EXPLAIN, PRAGMA); writes are refused."""
    from warehouse import Warehouse
    from warehouse.catalog import query as run_query

    try:
        columns, rows = run_query(Warehouse(state.warehouse), query)
    except ReadOnlyQueryError as exc:
        raise _fail(exc) from exc
    except Exception as exc:  # DuckDB's own message says what is wrong with the query
        raise _fail(exc) from exc
    if as_json:
        records = [{c: _jsonable(v) for c, v in zip(columns, row, strict=True)} for row in rows]
        print(json.dumps(records, ensure_ascii=False, default=str))
        return
    table = Table(*columns)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    out.print(table)


@app.command()
def runs(limit: Annotated[int, typer.Option(help="How many of the latest rows")] = 20) -> None:
    """The runs ledger: latest stage executions first."""
    from warehouse import Warehouse
    from warehouse.catalog import query as run_query

    columns, rows = run_query(
        Warehouse(state.warehouse),
        "SELECT run_id, stage, status, count(*) AS items, sum(rows) AS rows, "
        "strftime(min(started_at), '%Y-%m-%d %H:%M:%S') AS started, "
        "round(epoch(max(ended_at) - min(started_at)), 1) AS seconds, left(any_value(fingerprint), 8) AS fingerprint "
        f"FROM runs GROUP BY run_id, stage, status ORDER BY min(started_at) DESC LIMIT {int(limit)}",
    )
    table = Table(*columns)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    out.print(table)


@app.command("eval")
def eval_(
    qa: Annotated[str, typer.Option("--qa", help="Questions with gold evidence (qa_dev.jsonl format)")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout")] = False,
    scope: Annotated[list[str] | None, typer.Option(help="doc and/or corpus (default: both)")] = None,
    ablation: Annotated[
        bool, typer.Option("--ablation", help="One table: each retriever alone, +/- expansion, +/- rerank")
    ] = False,
) -> None:
    """Retrieval recall@5/10/15/20 (text, image, all evidence) over the ingested corpus."""
    from flows.query import recall_summary, run_queries
    from interleaf.evaluate.ablation import FULL, ablation_variants

    scopes = scope or ["doc", "corpus"]
    variants = ablation_variants(state.settings) if ablation else [FULL]
    try:
        run = run_queries(state.warehouse, state.settings, read_question_file(qa), scopes, variants)
    except (InterleafError, OSError, ValueError) as exc:
        raise _fail(exc) from exc
    results = recall_summary(run)
    if as_json:
        print(json.dumps({"run_id": run.run_id, "qset_id": run.qset.qset_id, "results": results}))
        return
    budgets = state.settings.retrieve.budgets
    title = f"retrieval recall ({run.run_id})"
    table = Table("variant", "scope", "evidence", *[f"R@{k}" for k in budgets], title=title)
    for r in results:
        for group, by_k in r["recall"].items():
            cells = [f"{by_k[str(k)]:.3f}" for k in budgets]
            table.add_row(r["variant"], r["scope"], f"{group} ({r['n'][group]})", *cells)
    out.print(table)


def run() -> None:
    started = time.perf_counter()
    try:
        app()
    finally:
        if os.environ.get("INTERLEAF_TIMING"):
            print(f"[interleaf] {time.perf_counter() - started:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    run()
