"""The describe stage inside `interleaf ingest`, on the documents holding the needle-in-image
evidence of qa_dev.jsonl: coverage, the needle share (issue 3) and the content cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleaf.evidence import contains_needle
from tests.conftest import IngestedWarehouse, run_cli, sql_rows


@pytest.fixture(scope="module")
def needle_items(qa_items: list[dict]) -> list[tuple[str, dict]]:
    return [(item["doc"], ev) for item in qa_items for ev in item["evidence"] if ev.get("needle_in_image")]


@pytest.fixture(scope="module")
def described(corpus_warehouse: IngestedWarehouse) -> Path:
    """docs/ and bad/ as the session ingested them (parse, describe, index)."""
    return corpus_warehouse.root


@pytest.fixture(scope="module")
def small_described(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """A warehouse of its own for the cache test, which switches the describer's config."""
    root = tmp_path_factory.mktemp("describe") / "warehouse"
    run_cli(root, "ingest", *[str(corpus / "docs" / d) for d in ("scanned-table.pdf", "layoutparser-table-page.pdf")])
    return root


def test_needle_in_image_share(described: Path, needle_items: list[tuple[str, dict]]) -> None:
    assert needle_items, "qa_dev.jsonl has no needle_in_image evidence"
    found = 0
    for doc, ev in needle_items:
        rows = sql_rows(
            described,
            "select t.ocr_text, t.table_md, t.vlm_text from quote_texts t join quotes q using (quote_id) "
            f"join documents d on d.doc_id = q.doc_id where d.name = '{doc}' and q.page_idx = {ev['page'] - 1} "
            "and q.kind in ('figure', 'table', 'equation')",
        )
        found += any(contains_needle([r["ocr_text"], r["vlm_text"]], ev["needle"]) for r in rows)
    share = found / len(needle_items)
    print(f"needle-in-image share: {found}/{len(needle_items)} = {share:.2f}")
    assert share >= 0.75


def test_every_image_quote_has_text_or_a_reject(described: Path) -> None:
    rows = sql_rows(
        described,
        "select q.quote_id, q.kind, t.ocr_text, t.table_md, t.ocr_source, t.table_source, t.describer, "
        "(select count(*) from rejects r where r.stage = 'describe' and r.quote_id = q.quote_id) as rejects "
        "from quotes q left join quote_texts t using (quote_id) where q.kind in ('figure', 'table')",
    )
    assert rows
    for row in rows:
        assert row["describer"] == "offline", row  # every image quote has a quote_texts row
        assert row["ocr_text"] or row["rejects"], row
        if row["ocr_text"]:
            assert row["ocr_source"] in ("text_layer", "rapidocr")
    tables = [r for r in rows if r["kind"] == "table"]
    assert tables and all(r["table_md"] and r["table_md"].startswith("| ") and "|---" in r["table_md"] for r in tables)
    sources = {r["ocr_source"] for r in rows}
    assert {"text_layer", "rapidocr"} <= sources  # vector figures from the text layer, raster ones by OCR


def cache_files(root: Path, namespace: str) -> dict[Path, float]:
    return {p: p.stat().st_mtime_ns for p in (root / "cache" / "describe" / namespace).rglob("*.json")}


def test_rerun_recomputes_nothing_and_switching_describer_only_describes(small_described: Path, corpus: Path) -> None:
    described = small_described
    reads, descriptions = cache_files(described, "read"), cache_files(described, "describe")
    assert reads and descriptions
    before = sql_rows(described, "select * from quote_texts order by quote_id")
    again = run_cli(described, "ingest", str(corpus / "docs" / "scanned-table.pdf"))
    assert "1 unchanged" in again.stdout + again.stderr
    # a describer with another setting: a new describe fingerprint, new descriptions, no OCR
    switched = run_cli(
        described, "--set", "describe.max_references=1", "ingest", str(corpus / "docs" / "scanned-table.pdf")
    )
    assert switched.returncode == 0
    assert cache_files(described, "read") == reads  # no crop read again
    new_descriptions = set(cache_files(described, "describe")) - set(descriptions)
    assert new_descriptions
    current = sql_rows(described, "select * from quote_texts order by quote_id")
    assert (
        len(current) == 1
        and current[0]["ocr_text"] == next(r for r in before if r["quote_id"] == current[0]["quote_id"])["ocr_text"]
    )
