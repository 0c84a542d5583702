"""The parse stage end to end on the real corpus, through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymupdf
import pytest

from benchmarks.bench_parse import PageTexts
from benchmarks.bench_parse import needle_share as bench_needle_share
from tests.conftest import IngestedWarehouse, run_cli, sql_rows


def test_quote_kinds_cover_text_title_table_figure(corpus_warehouse: IngestedWarehouse) -> None:
    kinds = {
        r["kind"]: r["n"] for r in sql_rows(corpus_warehouse.root, "select kind, count(*) n from quotes group by 1")
    }
    for kind in ("text", "title", "table", "figure"):
        assert kinds.get(kind, 0) > 0, kinds


def test_every_non_blank_page_has_quotes(corpus_warehouse: IngestedWarehouse, corpus: Path) -> None:
    counts = {
        (r["name"], r["page_idx"]): r["n_quotes"]
        for r in sql_rows(
            corpus_warehouse.root, "select d.name, p.page_idx, p.n_quotes from pages p join documents d using (doc_id)"
        )
    }
    checked = 0
    for pdf in sorted((corpus / "docs").glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in doc:
                pix = page.get_pixmap(dpi=20)
                blank = min(pix.samples) > 245 if pix.samples else True
                if blank:
                    continue
                checked += 1
                assert counts.get((pdf.name, page.number), 0) > 0, f"{pdf.name} page {page.number + 1} has no quotes"
    assert checked > 140


def test_scanned_documents_are_read_by_ocr(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(
        corpus_warehouse.root,
        "select d.name, bool_and(p.ocr_used) ocr, "
        "(select string_agg(q.text, ' ') from quotes q where q.doc_id = d.doc_id) text "
        "from documents d join pages p using (doc_id) where d.name like 'scanned-table%' group by d.name, d.doc_id",
    )
    assert {r["name"] for r in rows} == {"scanned-table.pdf", "scanned-table-multirow.pdf"}
    for r in rows:
        assert r["ocr"], r["name"]
        assert len(r["text"].split()) > 20, r
    joined = " ".join(r["text"] for r in rows)
    assert "64,058" in joined  # a figure from the scanned table, read by RapidOCR


def test_every_bad_file_ends_in_quotes_or_a_reject(corpus_warehouse: IngestedWarehouse, corpus: Path) -> None:
    stored = {r["name"] for r in sql_rows(corpus_warehouse.root, "select name from documents")}
    rejects = {
        Path(r["path"]).name: r["reason"]
        for r in sql_rows(
            corpus_warehouse.root, "select path, reason from rejects where stage = 'parse' and quote_id is null"
        )
    }
    for pdf in sorted((corpus / "bad").glob("*.pdf")):
        assert (pdf.name in stored) != (pdf.name in rejects), pdf.name
    assert "encrypted" in rejects["password.pdf"]
    assert "empty" in rejects["empty.pdf"]
    assert "not a PDF" in rejects["text-renamed.pdf"]
    assert "truncated" in rejects["truncated.pdf"]
    # The run reports the rejects and the batch goes on: docs/ are all stored.
    assert len(stored & {p.name for p in (corpus / "docs").glob("*.pdf")}) == 15
    assert "rejected" in corpus_warehouse.first.stdout


def test_invisible_and_garbage_text_layers_are_replaced_by_ocr(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(
        corpus_warehouse.root,
        "select d.name, p.ocr_used, "
        "(select string_agg(text, ' ') from quotes q where q.doc_id = d.doc_id) text "
        "from documents d join pages p using (doc_id) "
        "where d.name in ('invisible-text-layer.pdf', 'pdf-with-ocr-text.pdf')",
    )
    by_name = {r["name"]: r for r in rows}
    assert by_name["invisible-text-layer.pdf"]["ocr_used"]
    # The invisible layer claims a line that is not on the page; what is visible is kept.
    assert "Invisible OCR text layer" not in by_name["invisible-text-layer.pdf"]["text"]
    assert "Visible heading line" in by_name["invisible-text-layer.pdf"]["text"]
    assert by_name["pdf-with-ocr-text.pdf"]["ocr_used"]


def test_image_quotes_have_png_crops(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(corpus_warehouse.root, "select kind, img_path, bbox from quotes where kind in ('figure', 'table')")
    assert len(rows) > 30
    for r in rows:
        path = corpus_warehouse.root / r["img_path"]
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path


def test_captions_are_attached_to_their_figure_or_table(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(
        corpus_warehouse.root,
        "select q.page_idx, q.kind, q.caption from quotes q join documents d using (doc_id) "
        "where d.name = 'mavis-aaai2026.pdf' and q.caption is not null",
    )
    captions = {(r["page_idx"], r["caption"].split(":")[0]) for r in rows}
    assert (3, "Table 2") in captions  # the caption sits below this table, a label above it
    assert (0, "Figure 1") in captions
    assert all(r["kind"] in ("figure", "table") for r in rows)


def test_reading_order_follows_columns(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(
        corpus_warehouse.root,
        "select layout_idx, text from quotes q join documents d using (doc_id) "
        "where d.name = 'mavis-aaai2026.pdf' and page_idx = 0 order by layout_idx",
    )
    texts = [r["text"] for r in rows]

    def position(prefix: str) -> int:
        return next(i for i, t in enumerate(texts) if t.startswith(prefix))

    # Left column top to bottom, then the right column.
    assert position("Abstract") < position("1 Introduction") < position("long-form answers by including")


def test_headers_and_footers_are_kept_and_marked(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(corpus_warehouse.root, "select kind, furniture from quotes where kind in ('header', 'footer')")
    assert rows and all(r["furniture"] for r in rows)


def test_quote_ids_are_unique(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(corpus_warehouse.root, "select count(*) n, count(distinct quote_id) d from quotes")
    assert rows[0]["n"] == rows[0]["d"] > 1000


def needle_share(warehouse: Path, qa_items: list[dict]) -> tuple[float, list[str]]:
    """The share of the items' text needles found in a quote of their gold page, as `make bench`
    counts it (benchmarks/bench_parse.needle_share), over the warehouse's quotes; and the misses."""
    quotes = sql_rows(
        warehouse,
        "select d.name, q.page_idx, q.text, q.caption, q.footnote from quotes q join documents d using (doc_id)",
    )
    texts: PageTexts = {}
    for q in quotes:
        texts.setdefault((q["name"], q["page_idx"]), []).extend((q["text"], q["caption"], q["footnote"]))
    found, asked, misses = bench_needle_share(qa_items, texts)
    return found / asked, misses


def test_needles_of_text_evidence_are_in_quotes_on_the_gold_page(
    corpus_warehouse: IngestedWarehouse, qa_items: list[dict]
) -> None:
    share, misses = needle_share(corpus_warehouse.root, qa_items)
    print(f"layout backend: needle share {share:.3f}; misses: {misses}")
    assert share >= 0.93, misses


def test_second_ingest_parses_nothing_and_is_fast(corpus_warehouse: IngestedWarehouse, corpus: Path) -> None:
    again = run_cli(corpus_warehouse.root, "ingest", str(corpus / "docs"), str(corpus / "bad"))
    # 15 + 16 files, all unchanged: the 5 bad files rejected the first time stay rejected, unparsed
    assert "31 documents — 0 parsed, 31 unchanged, 0 rejected, 0 failed; 0 pages parsed" in again.stdout, again.stdout
    assert again.seconds < 0.10 * corpus_warehouse.first.seconds, (again.seconds, corpus_warehouse.first.seconds)
    run_id = again.stdout.split()[1].rstrip(":")
    statuses = sql_rows(corpus_warehouse.root, f"select distinct status from runs where run_id = '{run_id}'")
    assert statuses == [{"status": "cached"}], statuses


def test_no_barrier_a_document_is_described_while_another_is_still_parsed(
    corpus_warehouse: IngestedWarehouse,
) -> None:
    """pipeline/chains.py: each document's describe starts when its own parse ends. With a barrier
    (every parse first), no describe could start before the last parse ended; docs/ holds a
    76-page guide that parses long after the one-page documents beside it."""
    run_id = corpus_warehouse.first.stdout.split()[1].rstrip(":")
    this_run = f"from runs where run_id = '{run_id}'"
    last_parse = f"(select max(ended_at) {this_run} and stage = 'parse')"
    described = f"{this_run} and stage = 'describe' and status = 'ok'"
    (row,) = sql_rows(
        corpus_warehouse.root,
        f"select (select count(*) {described} and started_at < {last_parse}) as early, "
        f"(select count(*) {described}) as described",
    )
    assert row["described"] >= 10, row
    assert row["early"] >= 1, row


def test_sql_refuses_writes_and_prints_json(corpus_warehouse: IngestedWarehouse) -> None:
    refused = run_cli(corpus_warehouse.root, "sql", "drop view quotes", check=False)
    assert refused.returncode != 0
    assert "read-only" in refused.stderr
    refused = run_cli(corpus_warehouse.root, "sql", "create table x as select 1", check=False)
    assert refused.returncode != 0 and "refused" in refused.stderr
    rows = json.loads(run_cli(corpus_warehouse.root, "sql", "--json", "select count(*) as n from documents").stdout)
    assert rows == [{"n": 26}]


def test_sql_prints_what_is_stored_as_it_is(corpus_warehouse: IngestedWarehouse) -> None:
    """DPR's first page says "arXiv:2004.04906v3 [cs.CL]": rich's console markup read "[cs.CL]" as a
    style and dropped it from the table, and turned ":-1:" into an emoji."""
    query = (
        r"select regexp_extract(text, 'arXiv:\S+ \[[^\]]+\]') as id, ':-1: [bold]x[/bold]' as codes from quotes "
        "where text like '%arXiv:2004.04906v3%'"
    )
    shown = run_cli(corpus_warehouse.root, "sql", query).stdout
    assert "arXiv:2004.04906v3 [cs.CL]" in shown and ":-1: [bold]x[/bold]" in shown, shown


@pytest.mark.parametrize("table", ["documents", "pages", "quotes", "rejects", "runs"])
def test_every_table_is_a_view(corpus_warehouse: IngestedWarehouse, table: str) -> None:
    rows = sql_rows(corpus_warehouse.root, f"select count(*) n from {table}")
    assert rows[0]["n"] > 0


# MinerU's documents: short ones of several layouts (a table page, a handbook page, a plot with its
# table, a company overview) and a scan. Its share over every document of the corpus
# is `make bench`'s (benchmarks/bench_parse.py); here, the backend through the same CLI and warehouse.
MINERU_DOCS = (
    "layoutparser-table-page.pdf",
    "amt-handbook-page.pdf",
    "corrosion-plot-table.pdf",
    "reliance-overview.pdf",
    "scanned-table.pdf",
)


def test_needles_of_the_mineru_backend(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, qa_items: list[dict]
) -> None:
    """MinerU 4 at tier flash, through the same CLI and warehouse: every needle of the text
    evidence of these documents is in its quotes on the gold page. Flash cannot read the scan
    offline: it ends as a reject naming why."""
    root = tmp_path_factory.mktemp("mineru") / "warehouse"
    # the needles are looked for in the quotes, which parse alone writes: no crop is read or described
    # and BM25 alone is indexed
    parse_only = ("--set", "describe.kinds=[]", "--set", "index.retrievers=[{name: bm25, kind: bm25}]")
    result = run_cli(
        root, "--set", "parse.backend=mineru", *parse_only, "ingest", *(str(corpus / "docs" / n) for n in MINERU_DOCS)
    )
    assert re.search(r"scanned-table\.pdf\s+rejected\s+MinerU flash .*OCR", result.stdout), result.stdout
    items = [item for item in qa_items if item["doc"] in MINERU_DOCS]
    share, misses = needle_share(root, items)
    print(f"mineru backend: needle share {share:.3f} of {len(items)} questions' evidence")
    backends = {r["backend"] for r in sql_rows(root, "select distinct backend from quotes")}
    assert backends == {"mineru"}
    assert share == 1.0, misses
