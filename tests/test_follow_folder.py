"""The warehouse follows the folder, and questions read the published snapshot (issue 18, items 2
and 3), through the real CLI on three one-page documents of the corpus:

- while an ingest runs (frozen with SIGSTOP just after it has committed a new document's parse),
  `sql` and `ask` see the documents published before it, and `ask` answers instead of refusing;
  the new document appears when the ingest publishes;
- `ingest --sync` drops a document whose file is gone; a file whose content changed replaces its
  old version; `remove NAME` takes one out (an unknown name is refused, naming the closest);
- `gc --dry-run` deletes nothing, `gc` deletes exactly the parts no view shows, and says how many
  bytes it freed; what is published still answers.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interleaf.fingerprint import sha256_file
from tests.conftest import REPO, run_cli, sql_rows
from tests.support.prefect_home import cli_env

BACKUS = "backus-1977-page.pdf"
CORROSION = "corrosion-plot-table.pdf"
LAYOUT = "layoutparser-table-page.pdf"
SCANNED = "scanned-table.pdf"


def names(root: Path) -> list[str]:
    return sorted(r["name"] for r in sql_rows(root, "select name from documents"))


def parquet_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*.parquet") if "runs" not in p.parts and not p.name.startswith("_")}


@pytest.fixture(scope="module")
def inbox(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    """One warehouse for the module's tests, in order: the second goes on from where the first left it."""
    tmp_path = tmp_path_factory.mktemp("follow")
    folder = tmp_path / "inbox"
    folder.mkdir()
    for name in (CORROSION, LAYOUT):
        shutil.copy(corpus / "docs" / name, folder / name)
    root = tmp_path / "warehouse"
    run_cli(root, "ingest", str(folder))
    return folder, root


@pytest.mark.slow
def test_questions_read_the_published_snapshot_while_an_ingest_runs(inbox: tuple[Path, Path], corpus: Path) -> None:
    folder, root = inbox
    shutil.copy(corpus / "docs" / BACKUS, folder / BACKUS)
    env = cli_env(root)
    ingest = subprocess.Popen(
        [sys.executable, "-m", "interleaf.cli", "ingest", str(folder)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own group: stopped, resumed and (on failure) killed whole
    )
    try:
        deadline = time.monotonic() + 300
        while len(list((root / "documents").glob("*/*.parquet"))) < 3:  # Backus's parse has committed
            assert ingest.poll() is None and time.monotonic() < deadline, "the ingest ended before it was caught"
            time.sleep(0.2)
        os.killpg(ingest.pid, signal.SIGSTOP)  # frozen half-way: parsed, not yet published
        assert names(root) == [CORROSION, LAYOUT]
        asked = run_cli(root, "ask", "--json", "What did Backus call the von Neumann bottleneck?")
        assert BACKUS not in asked.stdout  # answered (not refused), from the two published documents
        os.killpg(ingest.pid, signal.SIGCONT)
        assert ingest.wait(timeout=600) == 0
    finally:
        if ingest.poll() is None:
            os.killpg(ingest.pid, signal.SIGKILL)
    assert names(root) == sorted([BACKUS, CORROSION, LAYOUT])


@pytest.mark.slow
def test_sync_replace_remove_and_gc(inbox: tuple[Path, Path], corpus: Path) -> None:
    folder, root = inbox
    (folder / CORROSION).unlink()
    shutil.copy(corpus / "docs" / SCANNED, folder / LAYOUT)  # the same name, other content

    plain = run_cli(root, "ingest", str(folder))  # without --sync a file gone stays
    assert "left the views: layoutparser-table-page.pdf (replaced by a new version" in plain.stdout
    assert names(root) == [BACKUS, CORROSION, LAYOUT]
    stored = sql_rows(root, f"select doc_id from documents where name = '{LAYOUT}'")
    assert [r["doc_id"] for r in stored] == [sha256_file(folder / LAYOUT)]  # the new content, not both

    (folder / BACKUS).unlink()
    synced = run_cli(root, "ingest", "--sync", str(folder))
    assert "left the views: backus-1977-page.pdf (file gone" in synced.stdout
    assert "left the views: corrosion-plot-table.pdf (file gone" in synced.stdout
    assert names(root) == [LAYOUT]

    before = parquet_files(root)
    dry = run_cli(root, "gc", "--dry-run")
    assert "would free" in dry.stdout and parquet_files(root) == before
    shown = {Path(p) for p in _published_files(root)}
    collected = run_cli(root, "gc")
    freed = int(collected.stdout.split("freed ")[1].split(" bytes")[0].replace(",", ""))
    assert freed > 0
    after = parquet_files(root)
    assert shown <= after  # every part a view reads is kept
    assert after < before and not (after - shown)  # and only those
    asked = run_cli(root, "ask", "--json", "What does the table report?", "--doc", LAYOUT)
    assert LAYOUT in asked.stdout

    unknown = run_cli(root, "remove", "layoutparser-table", "nosuch.pdf", check=False)
    assert unknown.returncode == 1 and "closest: layoutparser-table-page.pdf" in unknown.stderr
    assert names(root) == [LAYOUT]  # all or nothing
    removed = run_cli(root, "remove", "LAYOUTPARSER-TABLE-PAGE")
    assert "removed from the views: layoutparser-table-page.pdf" in removed.stdout
    assert names(root) == []
    refused = run_cli(root, "ask", "What does the table report?", check=False)
    assert refused.returncode == 1


def _published_files(root: Path) -> list[Path]:
    from warehouse import Warehouse, schemas

    wh = Warehouse(root)
    return [f for table in schemas.TABLES for f in wh.published_files(table)]
