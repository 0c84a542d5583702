"""DuckDB over the warehouse: one view per table, over the published snapshot's Parquet parts.

`connect()` builds the views in an in-memory database each time, so it always sees what the
last ingest published (not the parts an ingest running now has written) and never takes a lock
that a running ingest needs. Every view of one connection comes from one read of the published
state. Read once per view, as before, a state published meanwhile mixed two snapshots in one
query (`documents` of one, `pages` of the other): 15 of 114 queries in tests/test_warehouse.py.
`query()` is the read-only entry point behind `interleaf sql`.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb

from interleaf.errors import CatalogError, CorruptPartError, ReadOnlyQueryError
from warehouse import packs, schemas
from warehouse.store import StageState, Warehouse

State = Mapping[str, StageState]  # a published state, read once (Warehouse.current)

# Parse writes pages and quotes before the documents row that commits them; a document killed
# half-way has parts but no documents row, and stays out of sight until a rerun completes it.
COMMITTED_BY_DOCUMENT = ("pages", "quotes", "sections")

# Statement types a read-only query may run.
READ_ONLY_TYPES = {"SELECT", "EXPLAIN", "PRAGMA"}

LEDGER_TABLES = {"runs": "ledger"}


def sql_literal(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _source(wh: Warehouse, table: str, state: State) -> str:
    if table in LEDGER_TABLES:  # every run, published or not; parts written before a column was added lack it
        where = packs.locate(wh.root, table, LEDGER_TABLES[table], None)
        return _select(wh, table, where, wh.table_glob(table, LEDGER_TABLES[table]))
    # the published snapshot's parts, named one by one: what an ingest writes meanwhile stays out
    return _select(wh, table, wh.published_reads(table, state))


def _select(wh: Warehouse, table: str, where: packs.PackedRead, own_glob: Path | None = None) -> str:
    """A FROM item over `where`'s own files (or `own_glob`, matching the same) and packs."""
    wh.ensure_schema_file(table)
    schema_file = wh.schema_file(table)
    if not where.files and not where.packs:
        return f"read_parquet({sql_literal(schema_file)})"
    selects = []
    if where.files:
        own = [own_glob] if own_glob is not None else where.files
        files = ", ".join(sql_literal(f) for f in [*own, schema_file])
        selects.append(f"SELECT * FROM read_parquet([{files}], union_by_name = true)")
    for pack, names in sorted(where.packs.items()):
        body = f"SELECT * EXCLUDE ({packs.PART_COLUMN}) FROM read_parquet({sql_literal(pack)})"
        selects.append(body + _taken(pack, names))
    return "(" + " UNION ALL BY NAME ".join(selects) + ")"


def _taken(pack: Path, names: set[str]) -> str:
    """The filter that keeps a pack's rows of `names`: none when they are every part it holds."""
    held = packs.parts_held(pack)
    if held <= names:
        return ""
    if len(names) <= len(held - names):
        return f" WHERE {packs.PART_COLUMN} IN ({', '.join(sql_literal(n) for n in sorted(names))})"
    return f" WHERE {packs.PART_COLUMN} NOT IN ({', '.join(sql_literal(n) for n in sorted(held - names))})"


def view_sql(wh: Warehouse, table: str, state: State) -> str:
    body = f"SELECT * FROM {_source(wh, table, state)}"
    if table in COMMITTED_BY_DOCUMENT:
        body += " WHERE doc_id IN (SELECT doc_id FROM documents)"
    return f"CREATE OR REPLACE VIEW {table} AS {body}"


def connect(
    wh: Warehouse, threads: int = 2, state: State | None = None, tables: tuple[str, ...] | None = None
) -> duckdb.DuckDBPyConnection:
    """The views of the published state `state` (default: as it is now)."""
    state = wh.current() if state is None else state
    con = duckdb.connect(":memory:", config={"threads": threads})
    try:
        for table in tables or tuple(schemas.TABLES):
            # DuckDB reads each part's footer here: a damaged one can fail it
            with naming_damaged_parts(wh, functools.partial(wh.published_files, table, state)):
                con.execute(view_sql(wh, table, state))
    except BaseException:
        con.close()
        raise
    return con


def damaged_among(wh: Warehouse, files: Iterable[Path]) -> CorruptPartError | None:
    for path in files:
        try:
            wh.check_part(path)
        except CorruptPartError as exc:
            advice = "an ingest of its document sets it aside and computes it again"
            return CorruptPartError(path, f"{exc.reason}; {advice}")
    return None


# errors of the query itself, not of the data it read: no part is checked for them
QUERY_ERRORS = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException)


@contextlib.contextmanager
def naming_damaged_parts(wh: Warehouse, files: Callable[[], Iterable[Path]]) -> Iterator[None]:
    """DuckDB does not check a part's digest: a query that fails on what it read is told apart
    from one failing on a damaged part by checking `files`, which are read only then."""
    try:
        yield
    except (duckdb.Error, UnicodeDecodeError) as exc:  # the latter: a flipped string fetched
        if isinstance(exc, QUERY_ERRORS):
            raise
        damaged = damaged_among(wh, files())
        if damaged is None:
            raise
        raise damaged from exc


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(f"cannot parse the query: {exc}") from exc
    for statement in statements:
        kind = statement.type.name
        if kind not in READ_ONLY_TYPES:
            raise ReadOnlyQueryError(
                f"refused: {kind} statements change data, and `interleaf sql` is read-only "
                "(only SELECT, EXPLAIN and PRAGMA run here)"
            )


def query(wh: Warehouse, sql: str, tables: tuple[str, ...] | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run a read-only `sql` over the views. A part removed while the query ran (a compaction
    packed it, under the publish lock readers do not take) sends the query back to the manifests."""
    for attempt in range(3):
        try:
            return _query(wh, sql, tables)
        except (duckdb.IOException, FileNotFoundError):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _query(wh: Warehouse, sql: str, tables: tuple[str, ...] | None) -> tuple[list[str], list[tuple[Any, ...]]]:
    state = wh.current()
    con = connect(wh, state=state, tables=tables)

    def every_part() -> Iterator[Path]:
        return (f for table in tables or schemas.TABLES for f in wh.published_files(table, state))

    try:
        check_read_only(con, sql)
        with naming_damaged_parts(wh, every_part):
            result = con.execute(sql)
            columns = [d[0] for d in result.description] if result.description else []
            return columns, result.fetchall()  # inside: fetching decodes the strings
    finally:
        con.close()


def query_stored(wh: Warehouse, table: str, where: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Rows of `table` under every fingerprint stored, published or not (`where` is trusted SQL)."""
    found = packs.PackedRead()
    for folder in sorted(p for p in (wh.root / table).glob("*") if p.is_dir()):
        stored = packs.locate(wh.root, table, folder.name, None)
        found.files.extend(stored.files)
        found.packs.update(stored.packs)
    if not found.paths:
        return list(schemas.schema_of(table).names), []
    con = duckdb.connect(":memory:", config={"threads": 2})
    try:
        with naming_damaged_parts(wh, lambda: found.paths):
            result = con.execute(f"SELECT * FROM {_select(wh, table, found)} WHERE {where}")
            return [d[0] for d in result.description], result.fetchall()
    finally:
        con.close()


def write_catalog_file(wh: Warehouse) -> Path:
    """Persist the views in <root>/catalog.duckdb for users of the duckdb CLI or notebooks.

    Written under a temporary name and renamed, so a reader never sees half a catalog. Raises
    CatalogError (naming the file and the reason) when it cannot be written: the views of
    `interleaf sql` are unaffected, and the caller reports the catalog as stale."""
    path = wh.root / "catalog.duckdb"
    tmp = wh.root / f".catalog.duckdb.tmp-{os.getpid()}-{id(wh)}"
    wal = tmp.with_name(f"{tmp.name}.wal")
    try:
        tmp.unlink(missing_ok=True)
        state = wh.current()
        con = duckdb.connect(str(tmp))
        try:
            for table in schemas.TABLES:
                con.execute(view_sql(wh, table, state))
        finally:
            con.close()
        # DuckDB's close folds its log into the file, and on a full disk fails without a word:
        # the log left behind means the file lacks the views
        if wal.exists():
            raise OSError(f"DuckDB could not write the views into the file (its log {wal.name} is left)")
        tmp.replace(path)
    except (duckdb.Error, OSError) as exc:
        tmp.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)
        raise CatalogError(
            f"{path}: not updated ({type(exc).__name__}: {exc}); `interleaf sql` still sees every table"
        ) from exc
    return path
