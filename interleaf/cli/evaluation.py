"""`interleaf eval` and `interleaf export`: scoring question files, MMDocRAG's fixed contexts and
stored runs against each other; our answers in MMDocRAG's format."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from interleaf.cli.app import app, console, fail, out, print_skipped, state
from interleaf.cli.output import eval_report, recall_table, stored_metric_rows, styled_line
from interleaf.errors import InterleafError
from interleaf.questions.stage import read_question_file


@app.command("eval")
def eval_(
    qa: Annotated[str | None, typer.Option("--qa", help="Questions with gold evidence (qa_dev.jsonl format)")] = None,
    mmdocrag: Annotated[
        str | None, typer.Option("--mmdocrag", help="An MMDocRAG JSONL file: answer its fixed contexts, score them")
    ] = None,
    mmlongbench: Annotated[
        str | None,
        typer.Option("--mmlongbench", help="MMLongBench-Doc's samples.json: ask each question of its document, score"),
    ] = None,
    documents: Annotated[
        str | None, typer.Option("--documents", help="--mmlongbench: the folder of its PDFs, ingested first")
    ] = None,
    measured: Annotated[
        str | None,
        typer.Option("--measured", help="--mmlongbench: also write the table, with the command and commit, here"),
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
    given = (("--qa", qa), ("--mmdocrag", mmdocrag), ("--mmlongbench", mmlongbench), ("--compare", compare))
    chosen = [name for name, value in given if value]
    if len(chosen) != 1:
        raise fail(
            InterleafError("give exactly one of --qa FILE, --mmdocrag FILE, --mmlongbench FILE, --compare RUN_A RUN_B")
        )
    if (documents or measured) and not mmlongbench:
        raise fail(InterleafError("--documents and --measured go with --mmlongbench"))
    if compare:
        _compare(*compare, gate)
        return
    try:
        if mmlongbench:
            rows, run_id, results = _eval_mmlongbench(mmlongbench, documents, as_json, measured)
            names = {r["qset_id"]: Path(mmlongbench).name for r in results}
        elif mmdocrag:
            from flows.mmdocrag import run_mmdocrag

            done = run_mmdocrag(state.warehouse, state.settings, mmdocrag, images, input_mode)
            for reject in done.rejects:
                console.print(styled_line("rejected:", "yellow", str(reject)))
            rows, run_id = done.rows, done.run_id
            results: list[dict[str, Any]] = []
            names = {done.qset_id: Path(mmdocrag).name}
        else:
            budgets = state.settings.retrieve.budgets
            explain_k = (k or max(budgets)) if explain else None
            if explain_k is not None and explain_k not in budgets:
                raise InterleafError(f"--k {explain_k}: the contexts are cut at {budgets} quotes only")
            rows, run_id, results = _eval_qa(qa or "", scope or ["doc", "corpus"], ablation, as_json, explain_k)
            names = {r["qset_id"]: Path(qa or "").name for r in results}
    except (InterleafError, OSError, ValueError) as exc:
        raise fail(exc) from exc
    _report(rows, run_id, results, as_json, report, names)


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
        print_skipped(run)
        out.print(recall_table(results, state.settings.retrieve.budgets, run.qset.qset_id))
    for s in scopes if explain_k is not None else []:
        from interleaf.evaluate.explain import explain_stored, render

        reports, infos = explain_stored(explain_tables(run, s), explain_k)
        out.rule(f"evidence missed at k={explain_k}, {s} scope ({len(reports)})")
        out.print(render(reports, infos))
    run_id = rows[0]["run_id"] if rows else run.run_id
    return rows, run_id, [r | {"qset_id": run.qset.qset_id} for r in results]


def _eval_mmlongbench(
    samples: str, documents: str | None, quiet: bool, measured: str | None = None
) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    """MMLongBench-Doc: its documents ingested (what is stored is reused), each question asked in
    its document's scope, scored by the benchmark's rules (interleaf/evaluate/mmlongbench_rows.py)."""
    from flows.query import recall_summary, run_queries
    from interleaf.evaluate.ablation import FULL
    from interleaf.evaluate.mmlongbench_rows import render_table
    from interleaf.questions.mmlongbench import read_mmlongbench

    qset = read_mmlongbench(samples)
    if documents:
        from flows.runner import run_ingest

        report = run_ingest(state.warehouse, state.settings, [documents], force_from=None)
        if report.failed:
            raise InterleafError(f"{documents}: the ingest failed; see `interleaf runs`")
    run = run_queries(state.warehouse, state.settings, qset, ["doc"])
    rows = run.table("eval_metrics", FULL.name, "doc").to_pylist()
    table = render_table(rows)
    if not quiet:
        print_skipped(run)
        out.rule(
            f"{Path(samples).name}: {len(qset.rows)} questions, document scope (dev figures where it is a dev set)"
        )
        print(table)
    if measured:
        from interleaf.measured import write_measured

        write_measured(Path(measured), f"MMLongBench-Doc: {Path(samples).parent.name}", table, sys.argv)
    run_id = rows[0]["run_id"] if rows else run.run_id
    return rows, run_id, [r | {"qset_id": run.qset.qset_id} for r in recall_summary(run)]


def _report(
    rows: list[dict[str, Any]],
    run_id: str,
    results: list[dict[str, Any]],
    as_json: bool,
    folder: str | None,
    names: dict[str, str],
) -> None:
    out_dir = Path(folder) if folder else state.warehouse / "reports" / f"eval-{run_id}"
    payload, headline = eval_report(rows, run_id, results, out_dir, names)
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
            raise fail(InterleafError(f"--gate {item!r} is not METRIC=MARGIN"))
        margins[metric] = float(margin)
    try:
        rows_a, rows_b = stored_metric_rows(state.warehouse, run_a), stored_metric_rows(state.warehouse, run_b)
    except InterleafError as exc:
        raise fail(exc) from exc
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
        raise fail(exc) from exc
    out.print(f"{count} questions written to {mmdocrag}" + (f" and {finetune}" if finetune else ""))
