"""Parts damaged on disk: every flipped bit and every truncation found on read, the damaged part set
aside and its unit computed again (make faults: "corrupt Parquet part", at CI size)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.faults import corrupt_parts
from benchmarks.faults.common import FaultContext
from interleaf.errors import CorruptPartError
from warehouse import Warehouse, schemas, store
from warehouse.parts import check, seal

REPO = Path(__file__).resolve().parents[1]
# a command whose last act is reading a part: what `interleaf ask` is once it has printed its answer
READ_THEN_EXIT = """
import sys
from pathlib import Path
from warehouse import schemas
from warehouse.parts import open_sealed
open_sealed(Path(sys.argv[1]), schemas.QUOTES)
"""


def _quotes(n: int) -> pa.Table:
    rows = [
        {
            "quote_id": f"q{i}",
            "doc_id": "d",
            "page_idx": i // 4,
            "layout_idx": i % 4,
            "kind": "figure" if i % 3 == 0 else "text",
            "bbox": [1.0, 2.0, 3.0 + i, 4.0],
            "text": f"quote {i} " * (i % 5),
            "text_source": "text_layer",
            "caption": f"Fig. {i}." if i % 3 == 0 else None,
            "furniture": False,
            "backend": "offline",
        }
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=schemas.QUOTES)


def test_every_bit_flip_and_every_truncation_of_a_sealed_part_is_found(tmp_path: Path) -> None:
    """Parquet's page checksums alone miss flips in the footer (one turned a caption into null
    without an error); the part's own digest covers every byte."""
    data = seal(_quotes(12))
    path = tmp_path / "q.parquet"
    for at in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[at] ^= 1 << bit
            with pytest.raises(CorruptPartError):
                check(bytes(damaged), path)
    for keep in range(len(data)):
        with pytest.raises(CorruptPartError):
            check(data[:keep], path)
    check(data, path)  # the whole part passes


def test_a_process_that_exits_right_after_reading_a_part_ends_cleanly(tmp_path: Path) -> None:
    """Arrow's scan threads may release a read's input after `read_table` has returned. Over
    Python's bytes that took the GIL, and in a process already exiting it aborted ("terminate called
    without an active exception", exit -6): 76 of 100 such processes here before the bytes were
    copied into Arrow's memory, 0 of 300 after."""
    path = tmp_path / "q.parquet"
    path.write_bytes(seal(_quotes(200)))
    for _ in range(10):
        proc = subprocess.run(
            [sys.executable, "-c", READ_THEN_EXIT, str(path)], cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-500:])


def test_a_part_written_before_sealing_still_reads_and_a_broken_one_is_named(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    table = _quotes(3)
    path = wh.part_path("quotes", "fp", "d")
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)  # as parts were written before they carried a digest
    assert wh.read_part("quotes", "fp", "d").equals(table)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(CorruptPartError, match=str(path)):
        wh.read_part("quotes", "fp", "d")


def test_set_aside_moves_the_part_out_of_sight_and_gc_frees_it(tmp_path: Path) -> None:
    from warehouse.gc import collect

    wh = Warehouse(tmp_path)
    path = wh.write_part("quotes", "fp", "d", _quotes(2))
    moved = wh.set_aside(path)
    assert not path.exists() and moved.is_file() and moved.is_relative_to(tmp_path / "_corrupt")
    size = moved.stat().st_size
    assert collect(wh, dry_run=True).bytes == size and moved.exists()
    assert collect(wh, dry_run=False).bytes == size
    assert not (tmp_path / "_corrupt").exists()


@pytest.mark.slow
def test_damaged_parts_are_refused_on_read_then_set_aside_and_computed_again(tmp_path: Path, corpus: Path) -> None:
    outcome = corrupt_parts.run(FaultContext(corpus, tmp_path, "ci"))
    print(outcome)
    assert outcome.ok, outcome.failures
    assert "1 of 1 refused naming the part" in outcome.detail  # the first case damages a part a question reads


def test_a_query_that_fails_on_a_damaged_part_names_it(tmp_path: Path) -> None:
    """DuckDB reads the views without the digest; where what it read fails it (bad UTF-8 in a
    flipped string, say), the error names the part instead of DuckDB's message."""
    import duckdb

    from warehouse.catalog import query

    wh = Warehouse(tmp_path)
    path = wh.write_part("quotes", "fp", "d", _quotes(40))
    wh.write_part(
        "documents",
        "fp",
        "d",
        pa.Table.from_pylist(
            [{"doc_id": "d", "name": "d.pdf", "path": "/d.pdf", "pages": 10, "bytes": 1, "title": None}],
            schema=schemas.DOCUMENTS,
        ),
    )
    wh.publish("ingest", {"parse": ("fp", ("documents", "quotes"))})
    original = path.read_bytes()
    named = 0
    # every 13th byte (~410 of the part's 5.4 kB: its pages, their headers, the footer): the views are
    # built for each query (~36 ms here), and every 5th byte took this test 37 s alone, 120 s in `make test`
    for at in range(4, len(original) - 8, 13):
        damaged = bytearray(original)
        damaged[at] ^= 0x80
        path.unlink()
        path.write_bytes(bytes(damaged))
        store._SOUND.clear()  # a part found whole is not checked again by the same process: a new command's view
        try:
            query(wh, "select quote_id, text, caption from quotes")
        except CorruptPartError as exc:
            assert str(path) in str(exc)
            named += 1
        except (duckdb.Error, UnicodeDecodeError) as exc:  # the failure this test is for
            pytest.fail(f"byte {at}: DuckDB's error reached the caller: {exc}")
    assert named > 0
