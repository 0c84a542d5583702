"""Adding a retriever in config indexes that retriever only; the others stay cached (runs ledger)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import REPO, IngestedWarehouse, run_cli, sql_rows


def test_index_rows_exist_for_every_configured_retriever(corpus_warehouse: IngestedWarehouse) -> None:
    rows = sql_rows(
        corpus_warehouse.root,
        "SELECT 'bm25' AS r, count(*) AS n FROM index_texts UNION ALL "
        "SELECT retriever, count(*) FROM quote_embeddings GROUP BY 1 ORDER BY 1",
    )
    counts = {r["r"]: r["n"] for r in rows}
    assert counts["bm25"] > 1000 and counts["minilm"] == counts["bm25"]
    dims = sql_rows(corpus_warehouse.root, "SELECT DISTINCT dim, len(vector) AS l FROM quote_embeddings")
    assert dims == [{"dim": 384, "l": 384}]


def test_adding_a_retriever_indexes_only_that_one(
    corpus_warehouse: IngestedWarehouse, corpus: Path, tmp_path: Path
) -> None:
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    config["index"]["retrievers"].append({"name": "bm25_plain", "kind": "bm25", "fields": {"doc_title": False}})
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump(config))
    run_cli(corpus_warehouse.root, "--config", str(path), "ingest", str(corpus / "docs"))
    rows = sql_rows(
        corpus_warehouse.root,
        "SELECT stage, status, rows FROM runs WHERE run_id = (SELECT max(run_id) FROM runs) AND stage LIKE 'index:%'",
    )
    by_stage = {r["stage"]: r for r in rows}
    assert by_stage["index:bm25_plain"]["status"] == "ok" and by_stage["index:bm25_plain"]["rows"] > 1000
    assert by_stage["index:bm25"]["status"] == "cached" and by_stage["index:minilm"]["status"] == "cached"
    parse = sql_rows(
        corpus_warehouse.root,
        "SELECT count(*) AS n FROM runs WHERE run_id = (SELECT max(run_id) FROM runs) "
        "AND stage = 'parse' AND status = 'ok'",
    )
    assert parse[0]["n"] == 0


def test_unchanged_ingest_encodes_nothing(corpus_warehouse: IngestedWarehouse, corpus: Path) -> None:
    parts = sorted((corpus_warehouse.root / "quote_embeddings").rglob("*.parquet"))
    before = {p: p.stat().st_mtime_ns for p in parts}
    second = run_cli(corpus_warehouse.root, "ingest", str(corpus / "docs"), str(corpus / "bad"))
    # the index manifests answer "nothing to do" from a directory listing: no model load, no encoding
    assert second.seconds < 0.1 * corpus_warehouse.first.seconds, (second.seconds, corpus_warehouse.first.seconds)
    assert {p: p.stat().st_mtime_ns for p in parts} == before
    rows = sql_rows(
        corpus_warehouse.root,
        "SELECT stage, status FROM runs WHERE run_id = (SELECT max(run_id) FROM runs)",
    )
    # every stage says what it did, even when it had nothing to do: the ledger is never partial
    assert {r["stage"] for r in rows} == {"parse", "describe", "index:bm25", "index:minilm"}
    assert {r["status"] for r in rows} == {"cached"}
