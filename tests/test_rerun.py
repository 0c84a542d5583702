"""Rerun, interruption and concurrency: the warehouse ends the same whatever happens on the way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli, sql_rows
from tests.support.prefect_home import cli_env

SMALL_DOCS = [
    "figures-example.pdf",
    "reliance-overview.pdf",
    "cyber-leadership-brief.pdf",
    "layoutparser-table-page.pdf",
    "corrosion-plot-table.pdf",
    "covid-report-ko.pdf",
]

CONTENT = {
    "documents": "select doc_id, name, pages, bytes, title from documents {where} order by doc_id",
    "pages": "select * from pages {where} order by doc_id, page_idx",
    "quotes": "select * exclude (score), round(score, 4) score from quotes {where} order by quote_id",
}


def contents(root: Path, names: list[str] | None = None) -> dict[str, list[dict]]:
    """The warehouse's documents, pages and quotes; those of the documents named `names` only."""
    where = ""
    if names is not None:
        listed = ", ".join(f"'{name}'" for name in names)
        where = f"where doc_id in (select doc_id from documents where name in ({listed}))"
    return {table: sql_rows(root, query.format(where=where)) for table, query in CONTENT.items()}


@pytest.fixture(scope="module")
def small_files(corpus: Path) -> list[str]:
    return [str(corpus / "docs" / name) for name in SMALL_DOCS]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, small_files: list[str]) -> Path:
    root = tmp_path_factory.mktemp("reference") / "warehouse"
    run_cli(root, "ingest", *small_files)
    return root


def test_run_from_parse_reparses_everything_stored(reference: Path, small_files: list[str]) -> None:
    before = contents(reference)
    result = run_cli(reference, "run", "--from", "parse")
    assert f"{len(SMALL_DOCS)} parsed" in result.stdout, result.stdout
    run_id = result.stdout.split()[1].rstrip(":")
    ledger = sql_rows(
        reference,
        f"select stage, status, count(*) n from runs where run_id = '{run_id}' and stage in ('parse', 'describe') "
        "group by all order by 1",
    )
    assert ledger == [
        {"stage": "describe", "status": "ok", "n": len(SMALL_DOCS)},
        {"stage": "parse", "status": "ok", "n": len(SMALL_DOCS)},
    ]
    assert contents(reference) == before  # deterministic: the same quotes, ids and boxes


def test_unknown_stage_is_a_clear_error(reference: Path) -> None:
    result = run_cli(reference, "run", "--from", "nonsense", check=False)
    assert result.returncode != 0 and "unknown stage" in result.stderr


def _spawn_ingest(root: Path, files: list[str], *, own_server: bool = False) -> subprocess.Popen[str]:
    env = cli_env(root, own_server=own_server)
    return subprocess.Popen(
        [sys.executable, "-m", "interleaf.cli", "ingest", *files],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill takes its workers too
    )


@pytest.mark.slow
def test_killed_ingest_then_rerun_equals_uninterrupted(tmp_path: Path, small_files: list[str], reference: Path) -> None:
    root = tmp_path / "warehouse"
    proc = _spawn_ingest(root, small_files)
    committed: list[Path] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        committed = list(root.glob("documents/*/*.parquet"))
        if committed:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < len(list(root.glob("documents/*/*.parquet"))) < len(SMALL_DOCS)

    result = run_cli(root, "ingest", *small_files)
    assert "0 failed" in result.stdout
    assert contents(root) == contents(reference)
    # the killed run may have left rows saying `running` (visible in SQL); the rerun finished all of its own
    rerun_id = result.stdout.split()[1].rstrip(":")
    statuses = sql_rows(root, f"select distinct status from runs where run_id = '{rerun_id}' order by 1")
    assert statuses and "running" not in {r["status"] for r in statuses}, statuses


@pytest.mark.slow
def test_two_ingests_at_once_leave_the_same_tables(tmp_path: Path, small_files: list[str], reference: Path) -> None:
    root = tmp_path / "warehouse"
    first = _spawn_ingest(root, small_files)
    second = _spawn_ingest(root, list(reversed(small_files)))
    for proc in (first, second):
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    assert contents(root) == contents(reference)
    assert not list(root.rglob(".*.tmp-*"))
