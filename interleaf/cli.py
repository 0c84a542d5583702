"""`interleaf`: ingest, query and rerun from the command line."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from interleaf.cli_output import answer_json, answers_table, eval_report, recall_table, stored_metric_rows
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


def quiet_libraries() -> None:
    # Prefect's log handler passes on every library's DEBUG records inside a flow run
    for name in ("bm25s", "httpx", "urllib3", "matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.WARNING)


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
    quiet_libraries()


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
    from flows.answer import answer_stages
    from flows.ingest import ingest_stages
    from flows.runner import run_ingest, stored_document_paths

    ingest_names = {s.name for s in ingest_stages(state.settings)} | {"index"}
    answer_names = [s.name for s in answer_stages(state.settings)]
    if from_ not in ingest_names and from_ not in answer_names:
        known = ", ".join([*sorted(ingest_names), *answer_names])
        raise _fail(InterleafError(f"unknown stage {from_!r}; the stages are {known}"))
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
        raise _fail(exc) from exc
    _print_query_run(run)
    out.print(answers_table(run, scope))
    path = Path(html) if html else state.warehouse / "reports" / f"{Path(qa).stem}-{qset.qset_id}.html"
    write_text_atomic(path, render_report(views, f"Interleaf answers: {Path(qa).name} ({scope} scope)"))
    out.print(f"HTML report: {path}")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question")],
    doc: Annotated[str | None, typer.Option(help="The document it is about (its file name)")] = None,
    scope: Annotated[str | None, typer.Option(help="doc or corpus (default: corpus without --doc)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer, citations and sources as JSON")] = False,
    html: Annotated[str | None, typer.Option(help="Also write the answer as a self-contained HTML page")] = None,
) -> None:
    """Answer one question: retrieve, generate, check every citation; print it and store it."""
    from flows.query import answer_views, run_queries
    from interleaf.generate.registry import get_generator
    from interleaf.questions.stage import single_question
    from interleaf.render import render_answer_page, render_terminal

    scope = scope or ("doc" if doc else "corpus")
    if scope == "doc" and not doc:
        raise _fail(InterleafError("--scope doc needs --doc NAME (the document the question is about)"))
    streaming = sys.stdout.isatty() and not as_json
    on_token = (lambda token: console.print(token, end="", markup=False, highlight=False)) if streaming else None
    try:
        generator = get_generator(state.settings.generate, on_token)
        run = run_queries(
            state.warehouse,
            state.settings,
            single_question(question, doc),
            [scope],
            use_prefect=False,
            evaluate=False,
            generator=generator,
        )
        view = answer_views(run, scope)[0]
    except (InterleafError, ValueError) as exc:
        raise _fail(exc) from exc
    if streaming and state.settings.generate.backend != "offline":
        console.print()
    if html:
        write_text_atomic(Path(html), render_answer_page(view))
    if as_json:
        print(json.dumps(answer_json(view), ensure_ascii=False))
        return
    out.print(render_terminal(view.question, view.checked, view.quotes))
    if html:
        out.print(f"HTML page: {html}")


def write_text_atomic(path: Path, text: str) -> None:
    from warehouse.store import atomic_write_bytes

    atomic_write_bytes(path, text.encode())


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
    qa: Annotated[str | None, typer.Option("--qa", help="Questions with gold evidence (qa_dev.jsonl format)")] = None,
    mmdocrag: Annotated[
        str | None, typer.Option("--mmdocrag", help="An MMDocRAG JSONL file: answer its fixed contexts, score them")
    ] = None,
    compare: Annotated[
        tuple[str, str] | None, typer.Option("--compare", help="RUN_A RUN_B: the metric differences, gated")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout")] = False,
    scope: Annotated[list[str] | None, typer.Option(help="doc and/or corpus (default: both)")] = None,
    ablation: Annotated[
        bool, typer.Option("--ablation", help="One table: each retriever alone, +/- expansion, +/- rerank")
    ] = False,
    images: Annotated[str | None, typer.Option(help="--mmdocrag: the folder its img_path are relative to")] = None,
    input_mode: Annotated[str, typer.Option(help="--mmdocrag: text or multimodal")] = "text",
    gate: Annotated[
        list[str] | None, typer.Option(help="--compare: METRIC=MARGIN (default: evaluate.gate in config)")
    ] = None,
    report: Annotated[str | None, typer.Option(help="Report folder (default: <warehouse>/reports/eval-<run>)")] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="--qa: every evidence item missed at --k, traced through each list")
    ] = False,
    k: Annotated[int | None, typer.Option("--k", help="--explain: the context size (default: the largest)")] = None,
) -> None:
    """Evaluate: recall@k and every answer metric of the papers over a question file; MMDocRAG's
    fixed contexts; or two stored runs against each other (a regression gate)."""
    chosen = [name for name, value in (("--qa", qa), ("--mmdocrag", mmdocrag), ("--compare", compare)) if value]
    if len(chosen) != 1:
        raise _fail(InterleafError("give exactly one of --qa FILE, --mmdocrag FILE, --compare RUN_A RUN_B"))
    if compare:
        _compare(*compare, gate)
        return
    try:
        if mmdocrag:
            from flows.mmdocrag import run_mmdocrag

            done = run_mmdocrag(state.warehouse, state.settings, mmdocrag, images, input_mode)
            for reject in done.rejects:
                console.print(f"[yellow]rejected:[/yellow] {reject}")
            rows, run_id = done.rows, done.run_id
            results: list[dict[str, Any]] = []
        else:
            budgets = state.settings.retrieve.budgets
            explain_k = (k or max(budgets)) if explain else None
            if explain_k is not None and explain_k not in budgets:
                raise InterleafError(f"--k {explain_k}: the contexts are cut at {budgets} quotes only")
            rows, run_id, results = _eval_qa(qa or "", scope or ["doc", "corpus"], ablation, as_json, explain_k)
    except (InterleafError, OSError, ValueError) as exc:
        raise _fail(exc) from exc
    _report(rows, run_id, results, as_json, report)


def _eval_qa(
    qa: str, scopes: list[str], ablation: bool, quiet: bool, explain_k: int | None = None
) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    from flows.query import explain_tables, recall_summary, run_queries
    from interleaf.evaluate.ablation import FULL, ablation_variants

    variants = ablation_variants(state.settings) if ablation else [FULL]
    run = run_queries(state.warehouse, state.settings, read_question_file(qa), scopes, variants)
    rows = [r for s in scopes for r in run.table("eval_metrics", FULL.name, s).to_pylist()]
    results = recall_summary(run)
    if not quiet:
        out.print(recall_table(results, state.settings.retrieve.budgets, run.qset.qset_id))
    for s in scopes if explain_k is not None else []:
        from interleaf.evaluate.explain import explain_stored, render

        reports, infos = explain_stored(explain_tables(run, s), explain_k)
        out.rule(f"evidence missed at k={explain_k}, {s} scope ({len(reports)})")
        out.print(render(reports, infos))
    run_id = rows[0]["run_id"] if rows else run.run_id
    return rows, run_id, [r | {"qset_id": run.qset.qset_id} for r in results]


def _report(
    rows: list[dict[str, Any]], run_id: str, results: list[dict[str, Any]], as_json: bool, folder: str | None
) -> None:
    out_dir = Path(folder) if folder else state.warehouse / "reports" / f"eval-{run_id}"
    payload, headline = eval_report(rows, run_id, results, out_dir)
    if as_json:
        print(json.dumps(payload, default=str))
    elif headline:
        print(headline)  # plain text: a terminal's width must not fold the table


def _compare(run_a: str, run_b: str, gate: list[str] | None) -> None:
    from interleaf.evaluate.compare import compare, render_compare

    margins = dict(state.settings.evaluate.gate)
    for item in gate or []:
        metric, sep, margin = item.partition("=")
        if not sep:
            raise _fail(InterleafError(f"--gate {item!r} is not METRIC=MARGIN"))
        margins[metric] = float(margin)
    try:
        rows_a, rows_b = stored_metric_rows(state.warehouse, run_a), stored_metric_rows(state.warehouse, run_b)
    except InterleafError as exc:
        raise _fail(exc) from exc
    result = compare(rows_a, rows_b, margins)
    out.print(render_compare(result, run_a=run_a, run_b=run_b), markup=False, highlight=False)
    raise typer.Exit(result.exit_code)


@app.command()
def export(
    mmdocrag: Annotated[str, typer.Option("--mmdocrag", help="Write MMDocRAG JSONL here")],
    qa: Annotated[str, typer.Option("--qa", help="The question file whose answers to export")],
    finetune: Annotated[str | None, typer.Option(help="Also write fine-tuning records (system/user/assistant)")] = None,
    scope: Annotated[str | None, typer.Option(help="doc or corpus (default: retrieve.scope)")] = None,
) -> None:
    """Our questions, contexts and answers in MMDocRAG's format (and as fine-tuning records)."""
    from flows.mmdocrag import export_mmdocrag
    from flows.query import run_queries

    scope = scope or state.settings.retrieve.scope
    try:
        run = run_queries(state.warehouse, state.settings, read_question_file(qa), [scope])
        count = export_mmdocrag(run, scope, Path(mmdocrag), Path(finetune) if finetune else None)
    except (InterleafError, OSError, ValueError) as exc:
        raise _fail(exc) from exc
    out.print(f"{count} questions written to {mmdocrag}" + (f" and {finetune}" if finetune else ""))


def run() -> None:
    started = time.perf_counter()
    try:
        app()
    finally:
        if os.environ.get("INTERLEAF_TIMING"):
            print(f"[interleaf] {time.perf_counter() - started:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    run()
