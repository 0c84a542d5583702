"""`interleaf`: ingest, query and rerun from the command line."""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from interleaf.cli.app import app, console, fail, out, print_query_run, state, write_text_atomic
from interleaf.cli.output import answer_json, answers_table, error_line
from interleaf.errors import InterleafError, ReadOnlyQueryError
from interleaf.questions.stage import read_question_file
from interleaf.runtime import interrupt


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="PDF files or folders")],
    sync: Annotated[
        bool, typer.Option("--sync", help="Also drop from the views the documents whose file is gone from PATHS")
    ] = False,
) -> None:
    """Parse new and changed documents into the warehouse (unchanged ones are skipped; a changed
    file replaces its old version)."""
    from flows.runner import run_ingest

    try:
        report = run_ingest(state.warehouse, state.settings, paths, force_from=None, sync=sync)
    except InterleafError as exc:
        raise fail(exc) from exc
    if interrupt.requested():
        interrupt.stopped(report.kept())
    report.print(out)
    if report.failed:
        raise typer.Exit(1)
    if report.all_rejected:
        n = len(set(report.files.values()))
        raise fail(
            InterleafError(f"every input was rejected ({n} document{'s' if n != 1 else ''}): nothing was ingested")
        )


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
    from flows.plans import answer_stages, ingest_stages
    from flows.runner import run_ingest, stored_document_paths

    ingest_names = {s.name for s in ingest_stages(state.settings)}
    ingest_names |= {n.partition(":")[0] for n in ingest_names}  # `index`: every retriever's index stage
    answer_names = [s.name for s in answer_stages(state.settings)]
    if from_ not in ingest_names and from_ not in answer_names:
        known = ", ".join([*sorted(ingest_names), *answer_names])
        raise fail(InterleafError(f"unknown stage {from_!r}; the stages are {known}"))
    try:
        if from_ in ingest_names:
            targets = paths or stored_document_paths(state.warehouse, state.settings)
            report = run_ingest(state.warehouse, state.settings, targets, force_from=from_)
            if interrupt.requested():
                interrupt.stopped(report.kept())
            report.print(out)
            if report.failed:
                raise typer.Exit(1)
            return
        from flows.query import run_queries, stored_question_sets

        qsets = [read_question_file(qa)] if qa else stored_question_sets(state.warehouse)
        for qset in qsets:
            run = run_queries(state.warehouse, state.settings, qset, [state.settings.retrieve.scope], force_from=from_)
            print_query_run(run)
    except (InterleafError, ValueError) as exc:
        raise fail(exc) from exc


@app.command()
def answer(
    qa: Annotated[str, typer.Option("--qa", help="A question file (JSON Lines: id, question, doc, ...)")],
    scope: Annotated[str | None, typer.Option(help="doc or corpus (default: retrieve.scope)")] = None,
    html: Annotated[str | None, typer.Option(help="The HTML report (default: <warehouse>/reports/<set>.html)")] = None,
) -> None:
    """Answer a whole question file through the answer flow, storing every stage's output, and
    write one HTML report with every answer."""
    from flows.query import answer_views, run_queries
    from interleaf.render import render_report

    scope = scope or state.settings.retrieve.scope
    try:
        qset = read_question_file(qa)
        run = run_queries(state.warehouse, state.settings, qset, [scope])
        views = answer_views(run, scope)
    except (InterleafError, ValueError) as exc:
        raise fail(exc) from exc
    print_query_run(run)
    out.print(answers_table(run, scope))
    path = Path(html) if html else state.warehouse / "reports" / f"{Path(qa).stem}-{run.qset.qset_id}.html"
    write_text_atomic(path, render_report(views, f"Interleaf answers: {Path(qa).name} ({scope} scope)"))
    out.print(f"HTML report: {path}")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question")],
    doc: Annotated[
        list[str] | None,
        typer.Option(help="A document it is about: file name (.pdf optional, any case) or doc_id prefix; repeatable"),
    ] = None,
    scope: Annotated[str | None, typer.Option(help="doc or corpus (default: doc with --doc, else corpus)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer, citations and sources as JSON")] = False,
    html: Annotated[str | None, typer.Option(help="Also write the answer as a self-contained HTML page")] = None,
) -> None:
    """Answer one question: retrieve, generate, check every citation; print it and store it."""
    from flows.query import answer_views, run_queries
    from interleaf.generate.registry import get_generator
    from interleaf.questions.stage import single_question
    from interleaf.render import render_answer_page, render_terminal
    from interleaf.scope import check_question, check_scope

    scope = scope or ("doc" if doc else "corpus")
    try:
        question = check_question(question)
        check_scope(scope)
    except InterleafError as exc:
        raise fail(exc) from exc
    if scope == "doc" and not doc:
        raise fail(InterleafError("--scope doc needs --doc NAME (the document the question is about)"))
    streaming = sys.stdout.isatty() and not as_json
    on_token = (lambda token: console.print(token, end="", markup=False, highlight=False)) if streaming else None
    try:
        generator = get_generator(state.settings.generate, on_token)
        run = run_queries(
            state.warehouse,
            state.settings,
            single_question(question, doc or []),
            [scope],
            use_prefect=False,
            evaluate=False,
            generator=generator,
        )
        view = answer_views(run, scope)[0]
    except (InterleafError, ValueError) as exc:
        raise fail(exc) from exc
    if streaming and state.settings.generate.backend != "offline":
        console.print()
    if html:
        write_text_atomic(Path(html), render_answer_page(view))
    if as_json:
        print(json.dumps(answer_json(view) | {"qset_id": run.qset.qset_id}, ensure_ascii=False))
        return
    out.print(render_terminal(view.question, view.checked, view.quotes, view.short_answer))
    if html:
        out.print(f"HTML page: {html}")


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
        raise fail(exc) from exc
    except Exception as exc:  # DuckDB's own message says what is wrong with the query
        raise fail(exc) from exc
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
    from warehouse.ledger import close_dead_runs

    close_dead_runs(Warehouse(state.warehouse))
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


@app.command("serve")
def serve_api(
    host: Annotated[str | None, typer.Option(help="Address to listen on (default serve.api.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default serve.api.port, 8080)")] = None,
    new_key: Annotated[
        str | None, typer.Option("--new-key", help="Make an API key for NAME: store its hash, print it once, exit")
    ] = None,
    access_log: Annotated[bool, typer.Option(help="Log every request")] = True,
) -> None:
    """Serve the warehouse over HTTP: an OpenAI-compatible API, Interleaf's own API and a web page."""
    from interleaf.serve.main import new_key as make_key
    from interleaf.serve.main import serve

    try:
        if new_key:
            key, path = make_key(state.warehouse, state.settings, new_key)
            console.print(f"API key for {new_key} (shown once; its hash is in {path}):")
            print(key)
            return
        serve(state.warehouse, state.settings, host, port, access_log)
    except InterleafError as exc:
        raise fail(exc) from exc


# eval and export (interleaf/cli/evaluation.py) register themselves on the same app, listed after these
from interleaf.cli import evaluation, maintenance  # noqa: E402, F401  isort: skip


# a file that cannot be written for want of room is the machine's state, not a bug: one line, no traceback
FULL_DISK = {errno.ENOSPC, errno.EDQUOT}


def run() -> None:
    started = time.perf_counter()
    try:
        with interrupt.handling():
            app()
    except OSError as exc:
        if exc.errno not in FULL_DISK:
            raise
        message = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
        console.print(error_line(Exception(message)), soft_wrap=True)
        raise SystemExit(1) from None
    finally:
        if os.environ.get("INTERLEAF_TIMING"):
            print(f"[interleaf] {time.perf_counter() - started:.2f}s", file=sys.stderr)
