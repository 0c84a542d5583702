"""Tables on the evidence pages of MMLongBench-Doc's table- and chart-sourced questions, as an
ingest reads them: each evidence page is cut out as a one-page PDF (so that two commits' parse and
describe can be compared on the same pages in minutes, not on the whole dev half in an hour),
ingested, and counted.

    python benchmarks/evidence_pages.py pages  --samples samples.json --pdfs DIR --out PAGES
    interleaf --warehouse WH ingest PAGES
    python benchmarks/evidence_pages.py count --samples samples.json --warehouse [LABEL=]WH ... [--measured FILE]

`count` prints: the table-sourced questions whose evidence pages hold a quote with table Markdown
(a table quote, or a figure read as a table); the chart-sourced pages (no table among the sources)
with a figure read as a table (charts wrongly turned into tables); tables and figures on each.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _listed(value: Any) -> list[Any]:
    """samples.json writes its lists as Python literals in strings ("['Table', 'Chart']")."""
    return list(ast.literal_eval(value)) if isinstance(value, str) else list(value)


def page_name(doc: str, page: int) -> str:
    return f"{Path(doc).stem}-p{page:03d}.pdf"


def evidence(samples: Path) -> tuple[list[set[str]], set[str]]:
    """(the pages of each table-sourced question, the pages of chart-sourced ones without a table)."""
    tables, charts = [], set()
    for s in json.loads(samples.read_text()):
        sources = set(_listed(s["evidence_sources"]))
        pages = {page_name(s["doc_id"], int(p)) for p in _listed(s["evidence_pages"])}
        if "Table" in sources:
            tables.append(pages)
        elif "Chart" in sources:
            charts |= pages
    return tables, charts - set().union(*tables)


def write_pages(samples: Path, pdfs: Path, out: Path) -> int:
    from interleaf.pdf.mupdf import pymupdf

    tables, charts = evidence(samples)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for name in sorted(set().union(*tables) | charts):
        stem, page = name[: -len("-p000.pdf")], int(name[-7:-4])
        source = pdfs / f"{stem}.pdf"
        if not source.exists():
            continue
        with pymupdf.open(source) as doc, pymupdf.open() as one:
            if page > len(doc):
                continue
            one.insert_pdf(doc, from_page=page - 1, to_page=page - 1)
            one.save(out / name)
            written += 1
    return written


def count(samples: Path, warehouse: Path) -> list[str]:
    from warehouse import Warehouse
    from warehouse.catalog import connect

    tables, charts = evidence(samples)
    con = connect(Warehouse(warehouse))
    try:
        rows = con.sql(
            "SELECT d.name, q.kind, t.table_md IS NOT NULL AS has_table FROM quotes q JOIN documents d "
            "USING (doc_id) LEFT JOIN quote_texts t USING (quote_id) WHERE q.kind IN ('table', 'figure')"
        ).fetchall()
    finally:
        con.close()
    with_table = {name for name, _kind, has in rows if has}
    figure_tables = {name for name, kind, has in rows if has and kind == "figure"}
    ingested = {name for name, _kind, _has in rows}
    held = sum(1 for pages in tables if pages & with_table)
    only_figures = sum(1 for p in tables if p & figure_tables and not p & (with_table - figure_tables))
    wrong = sorted(charts & figure_tables)
    n = len(tables)
    on_charts = sum(1 for name, kind, _has in rows if kind == "figure" and name in charts)
    return [
        f"table-sourced questions whose evidence pages hold table Markdown: {held}/{n} ({held / max(n, 1):.3f})",
        f"  of which only through a figure read as a table: {only_figures}",
        f"chart-sourced pages with a figure read as a table (wrong): {len(wrong)} of {len(charts & ingested)} pages, "
        f"{on_charts} figures{': ' + ', '.join(wrong) if wrong else ''}",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["pages", "count"])
    ap.add_argument("--samples", required=True, type=Path)
    ap.add_argument("--pdfs", type=Path, help="pages: the benchmark's PDFs")
    ap.add_argument("--out", type=Path, help="pages: the folder the one-page PDFs go to")
    ap.add_argument(
        "--warehouse",
        action="append",
        default=[],
        help="count: a warehouse the pages were ingested into, LABEL=DIR to name it (a commit); repeatable",
    )
    ap.add_argument("--measured", type=Path, help="count: also write the figures to this file")
    args = ap.parse_args()
    if args.step == "pages":
        print(f"evidence_pages: {write_pages(args.samples, args.pdfs, args.out)} pages written to {args.out}")
        return
    lines = []
    for given in args.warehouse:
        label, _, folder = given.rpartition("=")
        lines += [f"{label or folder}:", *(f"  {line}" for line in count(args.samples, Path(folder)))]
    for line in lines:
        print(f"evidence_pages: {line}")
    if args.measured:
        from interleaf.measured import write_measured

        title = "Tables on the evidence pages of MMLongBench-Doc's dev half (dev figures)"
        write_measured(args.measured, title, "\n".join(lines), sys.argv, "python benchmarks/evidence_pages.py")


if __name__ == "__main__":
    main()
