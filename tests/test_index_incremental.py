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


@pytest.mark.parametrize("hold_model", [True, False])
def test_dense_rows_are_the_encoders_vectors_and_reused_by_key(small: IngestedWarehouse, hold_model: bool) -> None:
    """In one process, as the ingest runs it: a document's rows carry the encoder's vectors, a rerun
    given them back reuses every one, and under a memory budget the model is let go after each run."""
    import numpy as np
    import pyarrow.compute as pc

    from interleaf.config import load_settings
    from interleaf.index.stage import IndexStage
    from interleaf.stage import StageInput
    from tests.conftest import view_tables

    settings = load_settings()
    spec = next(s for s in settings.index.retrievers if s.kind == "dense")
    documents, quotes, quote_texts = view_tables(small.root, "documents", "quotes", "quote_texts")
    doc_id = documents.column("doc_id")[0].as_py()
    tables = {
        name: table.filter(pc.equal(table.column("doc_id"), doc_id))
        for name, table in {"documents": documents, "quotes": quotes, "quote_texts": quote_texts}.items()
    }
    stage = IndexStage(spec, settings.index, hold_model=hold_model)
    first = stage.run(StageInput(unit=doc_id, tables=tables, root=small.root))
    assert (stage._retriever is not None) is hold_model

    rows = first.tables["quote_embeddings"]
    texts = dict(
        zip(
            first.tables["index_texts"].column("quote_id").to_pylist(),
            first.tables["index_texts"].column("text").to_pylist(),
            strict=True,
        )
    )
    assert rows.num_rows == len(texts) > 3 and first.counts["encoded"] == rows.num_rows
    stored = np.array(rows.column("vector").to_pylist(), dtype=np.float32)
    expected = stage.retriever.encoder.encode([texts[q] for q in rows.column("quote_id").to_pylist()], False)
    np.testing.assert_allclose(stored, expected, atol=1e-5)
    assert set(rows.column("dim").to_pylist()) == {384}

    again = stage.run(StageInput(unit=doc_id, tables=tables, root=small.root, previous={"quote_embeddings": rows}))
    assert again.counts["encoded"] == 0
    assert again.tables["quote_embeddings"].equals(rows)
