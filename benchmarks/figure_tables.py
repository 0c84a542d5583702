"""Tables found where the layout model saw a figure, and charts wrongly read as tables
(interleaf/describe/figure_tables.py), over an ingested warehouse:

- with `--samples` (MMLongBench-Doc's samples.json): the figure quotes on the evidence pages of
  the questions whose evidence sources name a Table and of those naming a Chart and no Table;
  and the share of table-sourced questions whose evidence page holds a quote with table Markdown,
  as stored and as the reader now reads it (stored table Markdown, or a figure on the grid);
- without: every figure quote of the warehouse, those read as tables listed by document.

Each figure is read as the describe stage reads it (text layer, else RapidOCR of its crop).

    python benchmarks/figure_tables.py --warehouse DIR [--samples samples.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--warehouse", required=True, help="an ingested warehouse")
    ap.add_argument("--samples", help="MMLongBench-Doc's samples.json for the documents ingested there")
    ap.add_argument("--show", action="store_true", help="print the Markdown of each figure read as a table")
    ap.add_argument("--measured", help="also write the figures to this file (under docs/measured/)")
    args = ap.parse_args()

    from interleaf.config import load_settings
    from interleaf.describe.reading import ReadingSettings, page_texts, read_quote, renderer
    from interleaf.describe.registry import get_ocr_engine
    from interleaf.pdf.mupdf import pymupdf
    from interleaf.pdf.words import words_in_box
    from warehouse import Warehouse
    from warehouse.catalog import connect

    cfg = load_settings().describe
    ocr = get_ocr_engine(cfg.ocr)
    settings = ReadingSettings("bench", cfg.ocr.min_conf, cfg.ocr.min_vector_words, cfg.ocr.max_raster_share)
    con = connect(Warehouse(args.warehouse))
    try:
        quotes = (
            con.sql(
                "SELECT q.quote_id, q.doc_id, q.page_idx, q.bbox, q.kind, d.name, d.path, t.table_md "
                "FROM quotes q JOIN documents d USING (doc_id) LEFT JOIN quote_texts t USING (quote_id) "
                "WHERE q.kind IN ('figure', 'table')"
            )
            .to_arrow_table()
            .to_pylist()
        )
        pages = {(r["doc_id"], r["page_idx"]): r for r in con.sql("SELECT * FROM pages").to_arrow_table().to_pylist()}
    finally:
        con.close()
    by_page: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for q in quotes:
        by_page.setdefault((q["name"], q["page_idx"] + 1), []).append(q)

    def read_as_table(names: set[tuple[str, int]]) -> dict[str, str | None]:
        """quote_id -> the table Markdown the reader now gives each figure on these pages."""
        out: dict[str, str | None] = {}
        wanted = [q for key in sorted(names) for q in by_page.get(key, []) if q["kind"] == "figure"]
        for path in sorted({q["path"] for q in wanted}):
            here = [q for q in wanted if q["path"] == path]
            with pymupdf.open(path) as pdf:
                idx = {q["page_idx"] for q in here}
                rows = {i: pages[(here[0]["doc_id"], i)] for i in idx}
                texts = page_texts(pdf, rows, idx, None, idx)
                render = renderer(pdf, cfg.ocr.dpi)
                for q in here:
                    page = texts[q["page_idx"]]
                    words = words_in_box(page.words, tuple(q["bbox"]))
                    got = read_quote(q, words, page, lambda q=q, render=render: render(q), ocr, settings)
                    out[q["quote_id"]] = got["table_md"]
        return out

    if not args.samples:
        got = read_as_table(set(by_page))
        found = [qid for qid, md in got.items() if md]
        doc_names = {q["doc_id"][:16]: q["name"] for q in quotes}
        tables = [q for q in quotes if q["kind"] == "table"]
        names = sorted({q["name"] for q in quotes})
        lines = [
            f"documents with a table or a figure: {len(names)} ({', '.join(names)})",
            f"table quotes with table Markdown (as stored): {sum(1 for q in tables if q['table_md'])} of {len(tables)}",
            f"figure quotes read as tables: {len(found)} of {len(got)}",
        ]
        for prefix, n in sorted(Counter(qid[:16] for qid in found).items()):
            ids = ", ".join(q for q in found if q.startswith(prefix))
            lines.append(f"  {doc_names.get(prefix, prefix)}: {n}  ({ids})")
        print("\n".join(f"figure_tables: {line}" for line in lines))
        if args.measured:
            from interleaf.measured import write_measured

            title = "Tables and figures read as tables in an ingested warehouse"
            write_measured(Path(args.measured), title, "\n".join(lines), sys.argv, "python benchmarks/figure_tables.py")
        return

    samples = json.loads(Path(args.samples).read_text())
    names = {q["name"] for q in quotes}
    table_pages: set[tuple[str, int]] = set()
    chart_pages: set[tuple[str, int]] = set()
    table_questions = []
    for s in samples:
        if s["doc_id"] not in names:
            continue
        sources = set(_listed(s["evidence_sources"]))
        keys = {(s["doc_id"], int(p)) for p in _listed(s["evidence_pages"])}
        if "Table" in sources:
            table_pages |= keys
            table_questions.append(keys)
        elif "Chart" in sources:
            chart_pages |= keys
    chart_pages -= table_pages
    now = read_as_table(table_pages | chart_pages)

    def figures_as_tables(keys: set[tuple[str, int]]) -> tuple[int, int]:
        figures = [q for key in keys for q in by_page.get(key, []) if q["kind"] == "figure"]
        return sum(1 for q in figures if now.get(q["quote_id"])), len(figures)

    def holds_table(keys: set[tuple[str, int]], reread: bool) -> bool:
        here = [q for key in keys for q in by_page.get(key, [])]
        return any(q["table_md"] or (reread and now.get(q["quote_id"])) for q in here)

    if args.show:
        for label, keys in (("table page", table_pages), ("chart page", chart_pages)):
            for q in (q for key in sorted(keys) for q in by_page.get(key, []) if now.get(q["quote_id"])):
                print(f"--- {label}: {q['name']} page {q['page_idx'] + 1} {q['quote_id']}\n{now[q['quote_id']]}")
    found, on_table_pages = figures_as_tables(table_pages)
    wrong, on_chart_pages = figures_as_tables(chart_pages)
    before = sum(holds_table(keys, False) for keys in table_questions)
    after = sum(holds_table(keys, True) for keys in table_questions)
    n = len(table_questions)
    lines = [
        f"figures read as tables on table-sourced evidence pages: {found} of {on_table_pages}",
        f"figures read as tables on chart-sourced evidence pages (wrong): {wrong} of {on_chart_pages}",
        f"table-sourced questions whose evidence page holds table Markdown: "
        f"stored {before}/{n} ({before / max(n, 1):.3f}), now {after}/{n} ({after / max(n, 1):.3f})",
    ]
    for line in lines:
        print(f"figure_tables: {line}")
    if args.measured:
        from interleaf.measured import write_measured

        title = "Tables found in figure regions: MMLongBench-Doc's dev half (dev figures)"
        write_measured(Path(args.measured), title, "\n".join(lines), sys.argv, "python benchmarks/figure_tables.py")


def _listed(value: Any) -> list[Any]:
    """samples.json writes its lists as Python literals in strings ("['Table', 'Chart']")."""
    import ast

    return list(ast.literal_eval(value)) if isinstance(value, str) else list(value)


if __name__ == "__main__":
    main()
