"""Shared fixtures: the real corpus from ../shared/corpus, and warehouses ingested from it once
per session through the real CLI."""

from __future__ import annotations

import atexit
import faulthandler
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from benchmarks.prefect_home import cli_env, share_server

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("INTERLEAF_CORPUS", REPO.parent / "shared" / "corpus")).resolve()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def pytest_sessionstart(session: pytest.Session) -> None:
    # the session's commands share one Prefect server (benchmarks/prefect_home.py says why)
    share_server()


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_cli(warehouse: Path, *args: str, timeout: float = 1200, check: bool = True) -> CliResult:
    env = cli_env(warehouse)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "interleaf.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result = CliResult(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started)
    if check and proc.returncode != 0:
        raise AssertionError(f"interleaf {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return result


def sql_rows(warehouse: Path, query: str) -> list[dict]:
    return json.loads(run_cli(warehouse, "sql", "--json", query).stdout)


def view_tables(warehouse: Path, *names: str) -> tuple[pa.Table, ...]:
    """Whole tables as the views show them (current fingerprints, committed documents)."""
    from warehouse import Warehouse
    from warehouse.catalog import connect

    con = connect(Warehouse(warehouse))
    try:
        return tuple(con.sql(f"SELECT * FROM {name}").to_arrow_table() for name in names)
    finally:
        con.close()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "docs").is_dir():
        pytest.fail(f"the shared corpus is missing at {CORPUS} (set INTERLEAF_CORPUS)")
    return CORPUS


@pytest.fixture(scope="session")
def qa_items(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in (corpus / "qa_dev.jsonl").read_text().splitlines() if line.strip()]


@dataclass
class IngestedWarehouse:
    root: Path
    first: CliResult


@pytest.fixture(scope="session")
def corpus_warehouse(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> IngestedWarehouse:
    """docs/ and bad/ ingested once with the offline default, as a user would."""
    root = tmp_path_factory.mktemp("corpus") / "warehouse"
    first = run_cli(root, "ingest", str(corpus / "docs"), str(corpus / "bad"))
    return IngestedWarehouse(root, first)


@pytest.fixture
def fresh_pools() -> Iterator[None]:
    """Page-worker pools started by the test itself, and gone after it."""
    from interleaf.executor import shutdown_pools

    shutdown_pools()
    yield
    shutdown_pools()


# -- the runner's own exit ----------------------------------------------------------------------
# This process holds torch, ONNX Runtime, tokenizers, DuckDB and MuPDF at once, each with native
# threads and static destructors. One CI run crashed (SIGSEGV) in the interpreter's teardown after
# "523 passed": the suite's verdict was lost to the teardown order of five native libraries.
# So once pytest has reported, the atexit handlers run (page pools shut, pytest's locks removed)
# with faulthandler on, so a crash there still prints its threads' stacks and fails the run, and
# then the process exits with pytest's status, skipping only module teardown. The commands users
# run are not covered by this: the tests run them as subprocesses and check how they exit.
_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if _EXIT_STATUS not in config.stash:  # pytest stopped before a session ran (a usage error): its normal exit
        return
    sys.stdout.flush()
    sys.stderr.flush()
    faulthandler.enable(file=sys.__stderr__, all_threads=True)
    atexit._run_exitfuncs()
    os._exit(config.stash[_EXIT_STATUS])
