"""executor.kind: ray. A real Ray cluster on loopback (a head and a separate worker node, each a
`ray start` of this .venv), the ingest of four documents of docs/ through it, and the same rows as the local engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from benchmarks.ray_cluster import local_cluster
from tests.conftest import IngestedWarehouse, run_cli, view_tables
from tests.support.declared import add_kind_count_stage, source_copy
from tests.test_declared_stages import DOC, kind_counts_match_quotes

pytest.importorskip("ray", reason="Ray is the .[ray] extra (make install-dev)")

# Between them every kind of work: a figure and a table to describe, a scanned page read by OCR, a
# paper of two runs of pages (parse.pages_per_chunk: 8), Korean text. All of docs/ (153 pages, 76 of
# them one guide's) took 190-270 s here and showed nothing more.
DOCS = ["corrosion-plot-table.pdf", "scanned-table.pdf", "dpr-emnlp2020.pdf", "covid-report-ko.pdf"]
# the rows a document's ingest ends with, sorted by their key; index_texts: what each retriever indexed
COMPARED = {
    "documents": ["doc_id"],
    "quotes": ["quote_id"],
    "sections": ["doc_id", "section_id"],
    "quote_texts": ["quote_id"],
    "index_texts": ["retriever", "quote_id"],
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A head (1 CPU) and a worker node (1 CPU), as two machines would run them -> its address."""
    with local_cluster(tmp_path_factory.mktemp("ray"), nodes=2, cpus=1) as started:
        yield started.address


def _rows(root: Path, doc_ids: set[str]) -> dict[str, pa.Table]:
    tables = dict(zip(COMPARED, view_tables(root, *COMPARED), strict=True))
    out = {}
    for name, table in tables.items():
        mine = table.filter(pc.is_in(table["doc_id"], pa.array(sorted(doc_ids))))
        out[name] = mine.sort_by([(key, "ascending") for key in COMPARED[name]])
    return out


@pytest.mark.slow
def test_docs_ingested_on_a_ray_cluster_give_the_local_rows(
    cluster: str, corpus: Path, corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    """The same quotes, descriptions, sections and indexed texts per document as the local engine
    (corpus_warehouse ingested docs/ and bad/ with it), from units that ran on the cluster."""
    root = tmp_path / "warehouse"
    on_ray = ("--set", "executor.kind=ray", "--set", f"executor.address={cluster}")
    run = run_cli(root, *on_ray, "ingest", *(str(corpus / "docs" / name) for name in DOCS))
    assert "0 failed" in run.stdout, run.stdout + run.stderr
    doc_ids = set(view_tables(root, "documents")[0]["doc_id"].to_pylist())
    assert len(doc_ids) == len(DOCS), doc_ids
    rows, local = _rows(root, doc_ids), _rows(corpus_warehouse.root, doc_ids)
    for name in COMPARED:
        assert rows[name].num_rows > 0, name
        ray_rows, local_rows = rows[name].num_rows, local[name].num_rows
        assert rows[name].equals(local[name]), f"{name}: {ray_rows} rows on Ray, {local_rows} local"
    # the units ran in the cluster's worker processes (the ledger names each unit's process): the
    # local engine runs them all in the command's own
    (ledger,) = view_tables(root, "runs")
    workers = set(ledger.filter(pc.equal(ledger["status"], "ok"))["pid"].to_pylist())
    assert len(workers) >= 2, workers


@pytest.mark.slow
def test_a_toy_ingest_stage_runs_on_the_cluster_with_the_resources_its_name_asks(
    cluster: str, corpus: Path, tmp_path: Path
) -> None:
    """The stage tests/test_declared_stages.py adds, on Ray: its units run on the cluster with what
    `executor.resources.<its name>` asks, its table in the views; a key naming no stage is refused."""
    code = source_copy(tmp_path / "code")
    add_kind_count_stage(code)
    root = tmp_path / "warehouse"
    on_ray = ("--set", "executor.kind=ray", "--set", f"executor.address={cluster}")
    doc = str(corpus / "docs" / DOC)
    typo = run_cli(
        root, *on_ray, "--set", "executor.resources.kind_cont.num_cpus=0.5", "ingest", doc, code=code, check=False
    )
    assert typo.returncode != 0 and "kind_cont names no stage" in typo.stderr and "kind_count" in typo.stderr, (
        typo.stderr
    )
    run = run_cli(root, *on_ray, "--set", "executor.resources.kind_count.num_cpus=0.5", "ingest", doc, code=code)
    assert "kind_count: 1 ran" in run.stdout, run.stdout + run.stderr
    kind_counts_match_quotes(root, code)
    (ledger,) = view_tables(root, "runs")
    workers = set(ledger.filter(pc.equal(ledger["status"], "ok"))["pid"].to_pylist())
    assert len(workers) >= 2, workers  # the local engine runs every unit in the command's one process
