"""Index stages per retriever: adding one indexes that one only, removing one removes its rows from
the views, and an unchanged ingest encodes nothing. On a warehouse of its own (two small
documents), so no other test sees what these ones change."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, IngestedWarehouse, run_cli, sql_rows

DOCS = ["figures-example.pdf", "layoutparser-table-page.pdf"]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> IngestedWarehouse:
    root = tmp_path_factory.mktemp("incremental") / "warehouse"
    return IngestedWarehouse(root, run_cli(root, "ingest", *[str(corpus / "docs" / d) for d in DOCS]))


def _config(tmp_path: Path, edit) -> str:
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    edit(config)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _last_run(root: Path) -> list[dict]:
    """One row per stage of the latest run: its statuses and the rows it wrote over all documents."""
    return sql_rows(
        root,
        "SELECT stage, string_agg(DISTINCT status, ',') AS status, sum(rows) AS rows FROM runs "
        "WHERE run_id = (SELECT max(run_id) FROM runs) GROUP BY stage",
    )


def test_index_rows_exist_for_every_configured_retriever(corpus_warehouse: IngestedWarehouse) -> None:
    counts = {
        r["retriever"]: r["n"]
        for r in sql_rows(corpus_warehouse.root, "SELECT retriever, count(*) AS n FROM index_texts GROUP BY 1")
    }
    assert counts["bm25"] > 1000 and counts["minilm"] == counts["bm25"], counts
    dims = sql_rows(corpus_warehouse.root, "SELECT DISTINCT retriever, dim, len(vector) AS l FROM quote_embeddings")
    assert dims == [{"retriever": "minilm", "dim": 384, "l": 384}]


def test_adding_then_removing_a_retriever(small: IngestedWarehouse, corpus: Path, tmp_path: Path) -> None:
    files = [str(corpus / "docs" / d) for d in DOCS]
    extra = {"name": "bm25_plain", "kind": "bm25", "fields": {"doc_title": False}}
    added = _config(tmp_path, lambda c: c["index"]["retrievers"].append(extra))
    run_cli(small.root, "--config", added, "ingest", *files)
    by_stage = {r["stage"]: r for r in _last_run(small.root)}
    indexed = sql_rows(small.root, "SELECT count(*) AS n FROM index_texts WHERE retriever = 'bm25'")[0]["n"]
    assert by_stage["index:bm25_plain"]["status"] == "ok" and by_stage["index:bm25_plain"]["rows"] == indexed > 10
    assert by_stage["index:bm25"]["status"] == "cached" and by_stage["index:minilm"]["status"] == "cached"
    assert by_stage["parse"]["status"] == "cached"
    shown = "SELECT DISTINCT retriever FROM index_texts ORDER BY 1"
    assert [r["retriever"] for r in sql_rows(small.root, shown)] == ["bm25", "bm25_plain", "minilm"]

    # back to the default config: the removed retriever's rows leave the views, nothing is recomputed
    run_cli(small.root, "ingest", *files)
    assert [r["retriever"] for r in sql_rows(small.root, shown)] == ["bm25", "minilm"]
    assert {r["status"] for r in _last_run(small.root)} == {"cached"}

    without = _config(tmp_path, lambda c: c["index"]["retrievers"].pop())  # minilm removed
    run_cli(small.root, "--config", without, "ingest", *files)
    assert [r["retriever"] for r in sql_rows(small.root, shown)] == ["bm25"]
    assert sql_rows(small.root, "SELECT count(*) AS n FROM quote_embeddings") == [{"n": 0}]


def test_unchanged_ingest_encodes_nothing(small: IngestedWarehouse, corpus: Path) -> None:
    parts = sorted((small.root / "quote_embeddings").rglob("*.parquet"))
    before = {p: p.stat().st_mtime_ns for p in parts}
    run_cli(small.root, "ingest", *[str(corpus / "docs" / d) for d in DOCS])
    assert parts and {p: p.stat().st_mtime_ns for p in parts} == before
    rows = _last_run(small.root)
    # every stage says what it did, even when it had nothing to do: the ledger is never partial
    assert {r["stage"] for r in rows} == {"parse", "describe", "index:bm25", "index:minilm"}
    assert {r["status"] for r in rows} == {"cached"}
