"""What every fault shares: its context (corpus, a scratch folder, the size, the seed), its row
of the table, the CLI run in a warehouse of its own, and what "rows lost" counts."""

from __future__ import annotations

import atexit
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchmarks.stopping import stop
from tests.support.prefect_home import cli_env

REPO = Path(__file__).resolve().parents[2]

Size = Literal["ci", "full"]

# The rows that must come out of an ingest the same whatever happened on the way: each table's
# columns that do not name a run or a time (rejects carry a run_id and created_at).
CONTENT_QUERIES = {
    "documents": "select doc_id, name, pages, bytes, title from documents",
    "pages": "select * from pages",
    "quotes": "select * exclude (score), round(score, 4) as score from quotes",
    "sections": "select * from sections",
    "quote_texts": "select * from quote_texts",
    "index_texts": "select * from index_texts",
    "rejects": "select stage, doc_id, quote_id, path, reason from rejects",
}


@dataclass(frozen=True)
class FaultContext:
    corpus: Path  # ../shared/corpus
    workdir: Path  # a scratch folder of this fault's own
    size: Size = "full"
    seed: int = 20261124

    def scratch(self, name: str) -> Path:
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        return path


@dataclass(frozen=True)
class Outcome:
    """One row of the table. `survived`: the cases that ended as promised; `rows_lost`: rows of
    an uninterrupted reference missing (or changed) afterwards, summed over the cases."""

    fault: str
    cases: int
    survived: int
    rows_lost: int
    detail: str = ""
    failures: list[str] = field(default_factory=list)  # one line per case that did not survive

    @property
    def ok(self) -> bool:
        return self.cases > 0 and self.survived == self.cases and self.rows_lost == 0


@dataclass(frozen=True)
class Cli:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def interleaf(warehouse: Path, *args: str, timeout: float = 1200, env: dict[str, str] | None = None) -> Cli:
    """`interleaf ARGS` in `warehouse`, as a user runs it; its exit code is the caller's to judge."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "interleaf.cli", *args],
        cwd=REPO,
        env=env or cli_env(warehouse),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Cli(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)


def spawn(
    warehouse: Path, *args: str, env: dict[str, str] | None = None, via: tuple[str, ...] = ("interleaf.cli",)
) -> subprocess.Popen[str]:
    """`interleaf ARGS` started in its own process group (a kill of the group takes its workers);
    `via`: the module run and its arguments before ARGS (a wrapper that calls the CLI). A group of
    its own takes no Ctrl-C from the terminal: one still running when this process exits (Ctrl-C,
    SIGTERM under `make faults`, an error) is stopped then (`_stop_spawned`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", *via, *args],
        cwd=REPO,
        env=env or cli_env(warehouse),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _SPAWNED[:] = [p for p in _SPAWNED if p.poll() is None]  # the ended ones need no stop
    _SPAWNED.append(proc)
    return proc


_SPAWNED: list[subprocess.Popen[str]] = []


@atexit.register
def _stop_spawned() -> None:
    for proc in _SPAWNED:
        stop(proc)


def contents(warehouse: Path, tables: tuple[str, ...] = tuple(CONTENT_QUERIES)) -> dict[str, Counter[tuple]]:
    """The published views' rows as multisets (order-free), read in this process."""
    from warehouse import Warehouse
    from warehouse.catalog import connect

    con = connect(Warehouse(warehouse))
    try:
        return {t: Counter(_hashable(r) for r in con.execute(CONTENT_QUERIES[t]).fetchall()) for t in tables}
    finally:
        con.close()


def _hashable(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def rows_lost(reference: dict[str, Counter[tuple]], got: dict[str, Counter[tuple]]) -> int:
    """Rows of the reference missing from `got`, a changed row counted as lost."""
    return sum(sum((reference[t] - got.get(t, Counter())).values()) for t in reference)


def rows_added(reference: dict[str, Counter[tuple]], got: dict[str, Counter[tuple]]) -> int:
    """Rows in `got` the reference lacks (a duplicate, a half-written unit shown)."""
    return sum(sum((got[t] - reference.get(t, Counter())).values()) for t in got)
