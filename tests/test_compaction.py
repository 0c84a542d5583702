"""Packs and the index snapshot (issue 53): compacted parts read as the loose ones did, a kill -9
during a compaction or during a snapshot's build leaves the warehouse readable, and the rerun
leaves it as an undisturbed run would."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, IngestedWarehouse, run_cli
from tests.support.prefect_home import cli_env
from warehouse import Warehouse, packs, schemas
from warehouse.catalog import connect

QUESTION = "Which retriever does the DPR paper compare against BM25?"


def views(root: Path) -> dict[str, str]:
    """Every view, as a digest of its rows sorted (the ledger's, whose rows the commands add, apart)."""
    con = connect(Warehouse(root))
    try:
        out = {}
        for table in schemas.TABLES:
            if table == "runs":
                continue
            rows = sorted(repr(r) for r in con.sql(f"SELECT * FROM {table}").fetchall())
            out[table] = f"{len(rows)} rows, " + hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
        return out
    finally:
        con.close()


def loose_published_parts(root: Path) -> int:
    wh = Warehouse(root)
    return sum(len(wh.published_reads(t).files) for t in schemas.TABLES)


def packable_loose_parts(root: Path) -> int:
    """Loose published parts in folders holding two or more of them: what `gc --compact` packs. A
    folder of one part (a question set other tests on this worker answered) stays as it is."""
    wh = Warehouse(root)
    folders = Counter(path.parent for t in schemas.TABLES for path in wh.published_reads(t).files)
    return sum(n for n in folders.values() if n >= 2)


def copy_of(corpus_warehouse: IngestedWarehouse, tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(corpus_warehouse.root, root)
    return root


def test_packed_parts_read_as_their_loose_files_did(corpus_warehouse: IngestedWarehouse, tmp_path: Path) -> None:
    root = copy_of(corpus_warehouse, tmp_path, "wh")
    wh = Warehouse(root)
    entry = wh.current()["ingest/parse"]
    units = [u for u in sorted(entry.units or ()) if wh.has_part("quotes", entry.fingerprint, u)]  # not the rejected
    before = {u: wh.read_table("quotes", entry.fingerprint, [u]) for u in units}
    whole = wh.read_table("quotes", entry.fingerprint, units)
    shown = views(root)
    assert loose_published_parts(root) > 100

    printed = run_cli(root, "gc", "--compact").stdout
    assert "packs" in printed
    assert packable_loose_parts(root) == 0  # every published part in a folder of several is in a pack now
    assert not any((root / "quotes" / entry.fingerprint).glob("*.parquet"))
    assert views(root) == shown
    assert wh.read_table("quotes", entry.fingerprint, units).equals(whole)
    for unit in units:
        assert wh.has_part("quotes", entry.fingerprint, unit)
        assert wh.read_part("quotes", entry.fingerprint, unit).equals(before[unit])
    assert not wh.has_part("quotes", entry.fingerprint, "no-such-document")

    # a part written again after it was packed (a forced rerun) is read from its own file
    unit = units[0]
    changed = before[unit].slice(0, 1)
    wh.write_part("quotes", entry.fingerprint, unit, changed)
    assert wh.read_part("quotes", entry.fingerprint, unit).equals(changed)
    assert views(root)["quotes"] != shown["quotes"]
    wh.remove_part("quotes", entry.fingerprint, unit)  # and leaves the folder, file and packed rows both
    assert not wh.has_part("quotes", entry.fingerprint, unit)
    assert wh.read_table("quotes", entry.fingerprint, units).num_rows == whole.num_rows - before[unit].num_rows


def test_a_part_left_loose_beside_its_packed_copy_is_packed_by_the_next_compaction(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    """A kill after a folder's manifest is written and before its loose files are unlinked leaves
    a part in both places; one such part is below `gc --compact`'s count of two, and is packed all
    the same."""
    root = copy_of(corpus_warehouse, tmp_path, "wh")
    run_cli(root, "gc", "--compact")
    shown = views(root)
    alone = loose_published_parts(root)  # folders of one part (question sets other tests answered) stay
    wh = Warehouse(root)
    entry = wh.current()["ingest/parse"]
    unit = sorted(u for u in entry.units or () if wh.has_part("quotes", entry.fingerprint, u))[0]
    wh.write_part("quotes", entry.fingerprint, unit, wh.read_part("quotes", entry.fingerprint, unit))
    assert loose_published_parts(root) == alone + 1

    run_cli(root, "gc", "--compact")
    assert loose_published_parts(root) == alone
    assert views(root) == shown


def _kill_when(command: list[str], root: Path, ready: object, timeout_s: float = 120) -> bool:
    """Run `command`, kill -9 it the moment `ready(root)` holds; True when it was killed mid-way."""
    proc = subprocess.Popen(command, cwd=REPO, env=cli_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if ready(root):  # type: ignore[operator]
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.001)
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _packs_written(n: int) -> object:
    return lambda root: sum(1 for _ in root.glob(f"*/*/{packs.PACKS}/*.parquet")) >= n


def _manifests_written(n: int) -> object:
    return lambda root: sum(1 for _ in root.glob(f"*/*/{packs.PACKS}/{packs.MANIFEST}")) >= n


@pytest.fixture(scope="module")
def undisturbed(corpus_warehouse: IngestedWarehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """What each kill case is held to, made once: the session's warehouse compacted undisturbed,
    and the answer to QUESTION over its loose parts (this module writes only to copies of it)."""
    folder = tmp_path_factory.mktemp("undisturbed")
    root = copy_of(corpus_warehouse, folder, "compacted")
    run_cli(root, "gc", "--compact")
    return root, run_cli(copy_of(corpus_warehouse, folder, "loose"), "ask", QUESTION).stdout


@pytest.mark.parametrize(
    "moment",
    [_packs_written(1), _manifests_written(3), _manifests_written(9)],
    ids=["first pack written", "third manifest written", "ninth manifest written"],
)
def test_a_kill_during_compaction_leaves_the_views_whole_and_the_rerun_identical(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path, moment: object, undisturbed: tuple[Path, str]
) -> None:
    root = copy_of(corpus_warehouse, tmp_path, "wh")
    shown = views(root)
    compacted, loose_answer = undisturbed

    command = [sys.executable, "-m", "interleaf.cli", "--warehouse", str(root), "gc", "--compact"]
    assert _kill_when(command, root, moment), "the compaction ended before the moment to kill it"
    assert packable_loose_parts(root) > 0  # killed half-way: some parts loose, some packed
    assert views(root) == shown  # readable, every row once
    asked = tmp_path / "asked"
    shutil.copytree(root, asked)  # the question side reads loose and packed parts: the same answer
    assert run_cli(asked, "ask", QUESTION).stdout == loose_answer

    run_cli(root, "gc", "--compact")
    assert packable_loose_parts(root) == 0
    assert loose_published_parts(root) == loose_published_parts(compacted)
    assert views(root) == views(compacted) == shown
    left = list(root.rglob(".*.tmp-*"))
    assert not left, f"temporaries left: {left}"


def _index_signature(index: object) -> tuple:
    corpus = index.corpus  # type: ignore[attr-defined]
    scores = tuple(
        np.round(r.scores([QUESTION])[0], 5).tobytes()
        for r in index.retrievers.values()  # type: ignore[attr-defined]
        if r.kind == "bm25"
    )
    return (tuple(corpus.quote_ids), tuple(corpus.texts), scores)


def test_a_kill_while_the_index_snapshot_is_written_leaves_it_unread_and_the_rerun_identical(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    from flows.plans import open_index
    from interleaf.config import Settings
    from interleaf.retrieve import snapshot

    root = copy_of(corpus_warehouse, tmp_path, "wh")
    building = [sys.executable, "-m", "interleaf.cli", "--warehouse", str(root), "ask", QUESTION]
    temporary = lambda r: any((r / snapshot.FOLDER).glob(".*.tmp-*"))  # noqa: E731
    for _ in range(5):  # the write takes milliseconds: the poll may miss it, and the next try catch it
        shutil.rmtree(root / snapshot.FOLDER, ignore_errors=True)
        if _kill_when(building, root, temporary):
            break
    else:
        pytest.fail("five tries, and the snapshot's write was never caught to kill it")
    assert not any((root / snapshot.FOLDER).glob("*.index"))  # no half snapshot under its name

    first = run_cli(root, "ask", QUESTION).stdout  # builds it whole this time
    assert len(list((root / snapshot.FOLDER).glob("*.index"))) == 1
    from_snapshot = open_index(Warehouse(root), Settings())
    shutil.rmtree(root / snapshot.FOLDER)
    built = open_index(Warehouse(root), Settings())
    assert _index_signature(from_snapshot) == _index_signature(built)
    dense = [n for n, r in built.retrievers.items() if r.kind == "dense"]
    for name in dense:
        assert np.array_equal(from_snapshot.retrievers[name]._matrix, built.retrievers[name]._matrix)
    assert run_cli(root, "ask", QUESTION).stdout == first

    # a damaged snapshot is set aside and the index built again, never read
    stored = next((root / snapshot.FOLDER).glob("*.index"))
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x10
    stored.write_bytes(bytes(data))
    assert _index_signature(open_index(Warehouse(root), Settings())) == _index_signature(built)
    assert list((root / "_corrupt").rglob("*.index.*"))


def test_a_document_removed_after_packing_leaves_the_views_and_gc_frees_its_rows(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    packed = copy_of(corpus_warehouse, tmp_path, "packed")
    loose = copy_of(corpus_warehouse, tmp_path, "loose")
    run_cli(packed, "gc", "--compact")
    wh = Warehouse(packed)
    fingerprint = wh.current()["ingest/parse"].fingerprint
    con = connect(wh)
    doc_id = con.execute("SELECT doc_id FROM documents WHERE name = 'dpr-emnlp2020.pdf'").fetchall()[0][0]
    con.close()
    quotes_packs = packed / "quotes" / fingerprint / packs.PACKS
    assert doc_id in packs.manifest(quotes_packs)
    for root in (packed, loose):
        run_cli(root, "remove", "dpr-emnlp2020")
    assert views(packed) == views(loose)  # the packed rows of the removed document are filtered out

    printed = run_cli(packed, "gc").stdout
    run_cli(loose, "gc")
    assert "quotes 1" in printed, printed  # its packed quotes part, dropped from the manifest
    assert doc_id not in packs.manifest(quotes_packs)
    assert views(packed) == views(loose)
