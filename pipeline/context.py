"""What every task needs to know about the run it belongs to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from interleaf.config import Settings
from warehouse.ledger import RunRecord


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


@dataclass(frozen=True)
class RunContext:
    run_id: str
    flow: str
    warehouse: str  # resolved root
    settings: Settings
    force_stages: frozenset[str] = frozenset()  # stages `run --from` recomputes

    def forced(self, stage: str) -> bool:
        return stage in self.force_stages

    def record(
        self, stage: str, fingerprint: str, config: dict[str, Any], code_version: str, inputs: list[str], key: str
    ) -> RunRecord:
        """The ledger row of one stage execution in this run (`key` makes its part name unique)."""
        return RunRecord(
            run_id=self.run_id,
            flow=self.flow,
            stage=stage,
            fingerprint=fingerprint,
            config=config,
            code_version=code_version,
            inputs=inputs,
            key=key,
        )
