"""The `runs` ledger: one row per stage execution, written when it starts and again when it ends.

Each row names the process (pid, host) that writes it. A row left `running` by a process that is
gone (killed, or stopped before it could close its rows) is rewritten `interrupted` by the next
command that runs a flow or shows the ledger (`close_dead_runs`), once there is room to write it.
"""

from __future__ import annotations

import json
import os
import socket
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa

from interleaf.errors import WarehouseWriteError
from warehouse import schemas
from warehouse.store import Warehouse

LEDGER = "ledger"


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class RunRecord:
    run_id: str
    flow: str
    stage: str
    fingerprint: str
    config: dict[str, Any]
    code_version: str
    inputs: list[str]
    key: str
    started_at: datetime = field(default_factory=now)
    ended_at: datetime | None = None
    status: str = "running"
    rows: int = 0
    error: str | None = None

    def to_table(self) -> pa.Table:
        return pa.Table.from_pylist(
            [
                {
                    "run_id": self.run_id,
                    "flow": self.flow,
                    "stage": self.stage,
                    "fingerprint": self.fingerprint,
                    "config_json": json.dumps(self.config, sort_keys=True, default=str),
                    "code_version": self.code_version,
                    "inputs": self.inputs,
                    "started_at": self.started_at,
                    "ended_at": self.ended_at,
                    "status": self.status,
                    "rows": self.rows,
                    "error": self.error,
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                }
            ],
            schema=schemas.RUNS,
        )


class Ledger:
    def __init__(self, wh: Warehouse) -> None:
        self.wh = wh

    def _write(self, record: RunRecord) -> None:
        part = f"{record.run_id}__{record.stage}__{record.key}"
        self.wh.write_part("runs", LEDGER, part, record.to_table())

    def start(self, record: RunRecord) -> RunRecord:
        self._write(record)
        return record

    def finish(self, record: RunRecord, status: str, rows: int = 0) -> None:
        record.status, record.rows, record.ended_at = status, rows, now()
        self._write(record)

    def fail(self, record: RunRecord, exc: BaseException) -> None:
        record.status, record.ended_at = "failed", now()
        record.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        self._write(record)


def _alive(pid: int | None, host: str | None, started_at: datetime) -> bool:
    """Whether the process that wrote a `running` row may still be running it. Another host's
    rows cannot be checked from here and are left alone; a row with no pid (written before the
    column existed) is closed. A live pid started after the row is a reused pid."""
    if host is not None and host != socket.gethostname():
        return True
    if pid is None:
        return False
    try:
        created = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return False
    return created <= started_at.timestamp() + 1.0


def close_dead_runs(wh: Warehouse) -> int:
    """Rewrite as `interrupted` (ended now) every `running` row whose process is gone; returns
    how many. The dead process was the part's one writer; two commands closing the same part at
    once write the same row, each atomically."""
    import duckdb

    from warehouse.catalog import sql_literal

    parts = wh.root / "runs" / LEDGER
    if not any(parts.glob("*.parquet")):
        return 0
    wh.ensure_schema_file("runs")  # names every current column: old parts lack pid and host
    sources = f"[{sql_literal(parts / '*.parquet')}, {sql_literal(wh.schema_file('runs'))}]"
    con = duckdb.connect(":memory:", config={"threads": 1})
    try:
        rows = (
            con.sql(
                f"SELECT * FROM read_parquet({sources}, union_by_name = true, filename = true) WHERE status = 'running'"
            )
            .to_arrow_table()
            .to_pylist()
        )
    finally:
        con.close()
    closed = 0
    for row in rows:
        if _alive(row["pid"], row["host"], row["started_at"]):
            continue
        part = Path(row.pop("filename")).stem
        row |= {"status": "interrupted", "ended_at": now()}
        try:
            wh.write_part("runs", LEDGER, part, pa.Table.from_pylist([row], schema=schemas.RUNS))
        except WarehouseWriteError:  # a full disk: tidying waits for room, the command goes on
            break
        closed += 1
    return closed
