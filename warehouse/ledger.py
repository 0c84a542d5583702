"""The `runs` ledger: one row per stage execution, written when it starts and again when it ends.

A row still saying `running` after its process is gone is a killed run, visible in SQL.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

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
