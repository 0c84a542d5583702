"""What the CLI prints and writes beyond the stored tables: its consoles (a pipe or file gets
lines as long as their content), the answers' summary table, an
answer as JSON, evaluation rows for the report and the regression gate."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from interleaf.errors import InterleafError
from interleaf.evaluate.report import MetricRow, read_rows, text_table
from warehouse import Warehouse
from warehouse.catalog import query_stored

# Output to a pipe or a file has no width to fold to: rich's default there is 80 columns, which
# cuts tables and the eval --explain trace in a CI log. Wide enough for any table's natural width.
LOG_WIDTH = 4096


class LogConsole(Console):
    """A console writing to a pipe or a file: each line as long as its content. A table is plain
    aligned columns, as `cut`, `awk` or a CI log read them, not box-drawing characters; a rule is a
    short heading line (a full-width one would be LOG_WIDTH characters of dashes)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if any(isinstance(o, Table) for o in objects):
            kwargs.setdefault("soft_wrap", True)  # COLUMNS, when set, must not fold a table's rows
        super().print(*(plain_tables(o) for o in objects), **kwargs)

    def rule(self, title: Any = "", *, characters: str = "─", style: Any = "rule.line", align: Any = "center") -> None:
        text = Text.assemble(characters * 3, " ", title, " ", characters * 3) if title else characters * 3
        self.print(text, style=style if not title else "")


def plain_tables(renderable: Any) -> Any:
    """`renderable` with each rich Table in it (a Group's too) as a Text of plain aligned columns."""
    if isinstance(renderable, Group):
        return Group(*(plain_tables(r) for r in renderable.renderables))
    if not isinstance(renderable, Table) or not renderable.columns:
        return renderable
    header = [_plain(c.header) for c in renderable.columns]
    body = [[_plain(cell) for cell in row] for row in zip(*(c.cells for c in renderable.columns), strict=True)]
    lines = [text_table(header, body)]
    if renderable.title:
        lines.insert(0, _plain(renderable.title))
    if renderable.caption:
        lines.append(_plain(renderable.caption))
    return Text("\n".join(lines))


def _plain(cell: Any) -> str:
    # the CLI's cells are strings taken literally (markup off) or Text; any other renderable as str()
    return cell.plain if isinstance(cell, Text) else str(cell)


def make_console(stderr: bool = False) -> Console:
    """Rich's console for stdout (stderr); a LogConsole unless it writes to a terminal. COLUMNS,
    when set, still sets the width. Strings are printed as they are: what the CLI prints is data (file
    names, reject reasons, quote texts, SQL rows), and rich's markup and emoji codes would rewrite it
    ("scan [draft].pdf" as "scan .pdf", ":-1:" as an emoji). Styles come as `Text` spans."""
    stream = sys.stderr if stderr else sys.stdout
    literal: dict[str, Any] = {"stderr": stderr, "markup": False, "emoji": False}
    if stream.isatty():
        return Console(**literal)
    columns = os.environ.get("COLUMNS", "")
    return LogConsole(**literal, width=int(columns) if columns.isdigit() else LOG_WIDTH)


def styled_line(label: str, style: str, message: str) -> Text:
    """`label message`, the label in `style`, the message taken literally."""
    return Text.assemble((label, style), " ", message)


def error_line(exc: BaseException) -> Text:
    """`error: <message>` as one line."""
    return styled_line("error:", "red", " ".join(str(exc).split()))


def answers_table(run: Any, scope: str) -> Table:
    """Per question set: citations valid, supported share, words and seconds per answer."""
    answers = run.table("answers", scope=scope).to_pylist()
    citations = run.table("citations", scope=scope).to_pylist()
    n = max(len(answers), 1)
    cited = len(citations) + sum(a["invalid_citations"] for a in answers)
    words = sorted(a["words"] for a in answers) or [0]
    table = Table("answers", "citations valid", "supported", "median words", "s / answer", "errors")
    table.add_row(
        str(len(answers)),
        f"{len(citations)}/{cited}" + (f" ({len(citations) / cited:.0%})" if cited else ""),
        f"{sum(c['supported'] for c in citations) / max(len(citations), 1):.0%}",
        str(words[len(words) // 2]),
        f"{sum(a['seconds'] for a in answers) / n:.3f}",
        str(sum(a["error"] is not None for a in answers)),
    )
    return table


def answer_json(view: Any) -> dict[str, Any]:
    cited = set(view.checked.cited_quote_ids)
    return {
        "question": view.question,
        "answer": view.checked.markdown,
        "short_answer": view.short_answer,
        "generator": view.generator,
        "model": view.model,
        "invalid_citations": view.checked.invalid,
        "sentences": [
            {"text": s.text, "supported": s.supported}
            | {
                "citations": [
                    {"quote_id": c.quote_id, "supported": c.supported, "reason": c.reason} for c in s.citations
                ]
            }
            for s in view.checked.sentences
        ],
        "sources": [
            {"label": q.label, "quote_id": q.quote_id, "document": q.doc_name, "page": q.page_idx + 1, "kind": q.kind}
            | {"text": q.text, "img_path": q.img_path}
            for q in view.quotes
            if q.quote_id in cited
        ],
        # every quote the answer was generated from, cited or not: where it could have drawn from
        "context": [
            {"label": q.label, "quote_id": q.quote_id, "document": q.doc_name, "page": q.page_idx + 1, "kind": q.kind}
            for q in view.quotes
        ],
    }


def citation_json(c: Any) -> dict[str, Any]:
    return {"quote_id": c.quote_id, "supported": c.supported, "reason": c.reason}


def metric_rows(rows: list[dict[str, Any]]) -> list[MetricRow]:
    """`eval_metrics` rows as the report and the gate take them."""
    return [
        MetricRow(
            run_id=r["run_id"],
            qset=r["qset_id"],
            variant=r["variant"],
            scope=r["scope"],
            metric=r["metric"],
            breakdown=r["breakdown"],
            group=r["group_name"],
            value=r["value"],
            n=r["n"],
            note=r["note"],
            measured_by=r.get("measured_by") or "",
        )
        for r in rows
    ]


def stored_metric_rows(root: Path, run: str) -> list[MetricRow]:
    """A run's metric rows: a run id stored in the warehouse, or a report's eval_metrics.jsonl."""
    if Path(run).is_file():
        return read_rows(run)
    # every stored evaluation, published or not: a gate compares against a run of another configuration
    columns, values = query_stored(Warehouse(root), "eval_metrics", f"run_id = {_sql_literal(run)}")
    if not values:
        hint = "`interleaf sql 'select distinct run_id, qset_id from eval_metrics'` lists them"
        raise InterleafError(f"no stored evaluation run {run!r} and no such file; {hint}")
    return metric_rows([dict(zip(columns, v, strict=True)) for v in values])


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def recall_table(results: list[dict[str, Any]], budgets: list[int], qset_id: str) -> Table:
    """Recall@k per variant, scope and evidence group (`flows.query.recall_summary` rows)."""
    table = Table("variant", "scope", "evidence", *[f"R@{k}" for k in budgets], title=f"retrieval recall ({qset_id})")
    for r in results:
        for group, by_k in r["recall"].items():
            cells = [f"{by_k[str(k)]:.3f}" for k in budgets]
            table.add_row(r["variant"], r["scope"], f"{group} ({r['n'][group]})", *cells)
    return table


def eval_report(
    rows: list[dict[str, Any]],
    run_id: str,
    results: list[dict[str, Any]],
    folder: Path,
    names: dict[str, str] | None = None,
) -> tuple[dict[str, Any], str | None]:
    """Writes the report (Markdown, HTML, plots) into `folder`; -> the `--json` payload, and the
    headline table and the report's place as plain text (None when there are no metric rows).
    `names`: question set id -> its question file's name, for legends and tables."""
    from interleaf.evaluate.report import render_headline, write_report

    report_rows = metric_rows(rows)
    md, html, _pngs = write_report(report_rows, folder, names=names) if report_rows else (None, None, [])
    payload = {"run_id": run_id, "results": results, "metrics": rows, "report": str(html) if html else None}
    payload["qset_id"] = results[0]["qset_id"] if results else (rows[0]["qset_id"] if rows else None)
    if not md:
        return payload, None
    return payload, f"{render_headline(report_rows, names)}\nmetrics run {run_id}; report: {html} ({md.name})"
