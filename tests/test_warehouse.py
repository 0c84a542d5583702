"""The warehouse on its own: schemas checked on write, atomic parts, read-only SQL."""

from __future__ import annotations

import collections
import multiprocessing
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interleaf.errors import ReadOnlyQueryError, SchemaError
from warehouse import Warehouse, schemas
from warehouse.catalog import query


def _documents(n: int, title: str | None = "t") -> pa.Table:
    rows = [
        {"doc_id": f"d{i}", "name": f"n{i}.pdf", "path": f"/x/n{i}.pdf", "pages": i, "bytes": 10 * i, "title": title}
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=schemas.DOCUMENTS)


def test_write_rejects_a_table_that_differs_from_its_schema(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    with pytest.raises(SchemaError, match="missing"):
        wh.write_part("documents", "fp", "p", _documents(2).drop_columns(["title"]))
    with pytest.raises(SchemaError, match="nulls"):
        wh.write_part("documents", "fp", "p", _documents(2).set_column(0, "doc_id", pa.array([None, "x"], pa.string())))
    assert not wh.has_part("documents", "fp", "p")


def test_write_then_read_roundtrips_with_declared_types(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    table = pa.table(
        {"doc_id": ["a"], "name": ["a.pdf"], "path": ["/a.pdf"], "pages": [3], "bytes": [5], "title": [None]}
    )
    wh.write_part("documents", "fp", "a", table)  # int64 pages are cast to the declared int32
    back = wh.read_part("documents", "fp", "a")
    assert back.schema == schemas.DOCUMENTS
    assert back.to_pylist() == [
        {"doc_id": "a", "name": "a.pdf", "path": "/a.pdf", "pages": 3, "bytes": 5, "title": None}
    ]
    assert not list(tmp_path.rglob(".*.tmp-*"))


def _hammer(root: str, worker: int) -> None:
    wh = Warehouse(root)
    for i in range(30):
        wh.write_part("documents", "fp", "shared", _documents(50 + (i + worker) % 7))


def test_concurrent_writers_of_one_part_leave_one_whole_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    table = pq.read_table(Warehouse(tmp_path).part_path("documents", "fp", "shared"))
    assert 50 <= table.num_rows <= 56
    assert not list(tmp_path.rglob(".*.tmp-*"))


def test_views_show_only_the_current_fingerprint(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    wh.write_part("documents", "old", "a", _documents(3))
    wh.write_part("documents", "new", "a", _documents(1))
    wh.publish("ingest", {"parse": ("new", ("documents",))})
    assert query(wh, "select count(*) from documents")[1] == [(1,)]
    wh.publish("ingest", {"parse": ("old", ("documents",))})
    assert query(wh, "select count(*) from documents")[1] == [(3,)]


def test_a_stage_left_out_of_its_group_leaves_the_views(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    wh.write_part("documents", "p", "a", _documents(2))
    wh.write_part("documents", "x", "a", _documents(5))
    wh.publish("ingest", {"parse": ("p", ("documents",)), "extra": ("x", ("documents",))})
    wh.publish("other", {"kept": ("x", ("documents",))})
    assert query(wh, "select count(*) from documents")[1] == [(7,)]
    wh.publish("ingest", {"parse": ("p", ("documents",))})  # `extra` was removed from the ingest flow
    assert {v.stage for v in wh.current().values()} == {"parse", "kept"}  # another group's entry stays
    wh.publish("other", {})
    assert query(wh, "select count(*) from documents")[1] == [(2,)]


FLIP_S = 4.0  # views that read the state once per table mixed the two in 15 of 114 queries in this time


def _publish_in_turn(root: str, seconds: float) -> None:
    """Publish snapshots a and b in turn for `seconds`, as an ingest publishes while others read."""
    wh = Warehouse(root)
    ends, turn = time.monotonic() + seconds, 0
    while time.monotonic() < ends:
        wh.publish("ingest", {"parse": ("ab"[turn % 2], ("documents", "pages"))})
        turn += 1


def test_the_views_of_one_query_show_one_published_snapshot(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    for fingerprint, n in (("a", 1), ("b", 2)):  # a: one document and its page; b: two of each
        wh.write_part("documents", fingerprint, "p", _documents(n))
        wh.write_part("pages", fingerprint, "p", _pages(n))
    wh.publish("ingest", {"parse": ("a", ("documents", "pages"))})
    publisher = multiprocessing.get_context("spawn").Process(target=_publish_in_turn, args=(str(tmp_path), FLIP_S))
    publisher.start()
    seen: collections.Counter[tuple[int, int]] = collections.Counter()
    try:
        while publisher.is_alive():
            _, rows = query(wh, "select (select count(*) from documents), (select count(*) from pages)")
            seen[rows[0]] += 1
    finally:
        publisher.join()
    assert publisher.exitcode == 0
    # both snapshots were read while the state changed under the reader, never a mix of the two
    assert set(seen) == {(1, 1), (2, 2)}, seen


def test_empty_warehouse_has_typed_empty_views(tmp_path: Path) -> None:
    columns, rows = query(Warehouse(tmp_path), "select * from quotes")
    assert columns == schemas.QUOTES.names and rows == []


@pytest.mark.parametrize(
    "sql",
    [
        "insert into documents values (1)",
        "create table t as select 1",
        "drop view quotes",
        "copy documents to '/tmp/x.csv'",
        "attach 'x.db'",
        "select 1; delete from documents",
    ],
)
def test_sql_is_read_only(tmp_path: Path, sql: str) -> None:
    with pytest.raises(ReadOnlyQueryError, match="read-only"):
        query(Warehouse(tmp_path), sql)


def _pages(n: int) -> pa.Table:
    """The first page of each of `_documents(n)`."""
    rows = [
        {
            "doc_id": f"d{i}",
            "page_idx": 0,
            "width": 1.0,
            "height": 1.0,
            "rotation": 0,
            "has_text_layer": True,
            "ocr_used": False,
            "n_quotes": 0,
        }
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=schemas.PAGES)


def test_pages_and_quotes_of_an_uncommitted_document_stay_hidden(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    wh.write_part("pages", "fp", "d0", _pages(1))
    wh.publish("ingest", {"parse": ("fp", ("documents", "pages"))})
    assert query(wh, "select count(*) from pages")[1] == [(0,)]
    wh.write_part("documents", "fp", "d0", _documents(1))
    assert query(wh, "select count(*) from pages")[1] == [(1,)]


def test_readme_lists_every_table_with_its_columns() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for line in schemas.markdown().splitlines():
        assert line in readme, f"README.md is missing or has a stale line for: {line[:60]}"
