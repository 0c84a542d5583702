"""Shared fixtures: the real corpus from ../shared/corpus, and warehouses ingested from it once
per session through the real CLI."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import faulthandler
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from benchmarks.stopping import stop
from interleaf.built_models import CACHE_VARIABLE
from tests.support.prefect_home import cli_env, share_server
from tests.support.scratch import scratch_folder

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("INTERLEAF_CORPUS", REPO.parent / "shared" / "corpus")).resolve()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def pytest_sessionstart(session: pytest.Session) -> None:
    # the session's commands share one Prefect server (tests/support/prefect_home.py says why)
    share_server()
    # and the models derived from the shipped ones (interleaf/built_models.py): built once for the
    # session, not written to the user's cache (a test builds tiny models in folders of its own)
    if CACHE_VARIABLE not in os.environ:  # the pytest-xdist workers inherit the controller's
        os.environ[CACHE_VARIABLE] = str(scratch_folder("interleaf-test-models-"))
    if session.config.pluginmanager.hasplugin("dsession"):  # the pytest-xdist controller
        _start_corpus_ingest()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files holding a slow test first (`make test` hands out whole files with
    --no-loadscope-reorder): a long test started last leaves the other workers idle meanwhile."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_cli(warehouse: Path, *args: str, timeout: float = 1200, check: bool = True, code: Path = REPO) -> CliResult:
    """`interleaf ARGS` over `warehouse`, importing Interleaf from `code` (a copy of the tree)."""
    env = cli_env(warehouse)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "interleaf.cli", *args],
        cwd=code,
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


# Under pytest-xdist, the folder the controller ingests docs/ and bad/ into, for the workers
_CORPUS_INGEST = "INTERLEAF_TEST_CORPUS_INGEST"
_CORPUS_INGEST_TIMEOUT_S = 1200  # as run_cli's: ~130 s here


def _start_corpus_ingest() -> subprocess.Popen[str]:
    """The session's ingest of docs/ + bad/ (its longest setup, ~130 s here), started by the
    pytest-xdist controller in the background at the session's start, while the workers run the
    tests that do not need it; its outcome lands in `first.json` (written whole, then renamed).
    A session that ends first (a selection of tests, a signal to pytest alone) stops it as Ctrl-C
    would: else it ran on into the folder the session removes."""
    folder = scratch_folder("interleaf-test-corpus-")
    os.environ[_CORPUS_INGEST] = str(folder)  # the workers, started after this, inherit it
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "interleaf.cli", "ingest", str(CORPUS / "docs"), str(CORPUS / "bad")],
        cwd=REPO,
        env=cli_env(folder / "warehouse"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    atexit.register(stop, proc)  # before the folder's removal (atexit runs last in, first out)

    def outcome() -> None:
        written: dict[str, object] = {"error": "the ingest's thread ended with no outcome (its traceback is on stderr)"}
        try:
            out, err = proc.communicate(timeout=_CORPUS_INGEST_TIMEOUT_S)
            if proc.returncode == 0:
                written = dataclasses.asdict(CliResult(0, out, err, time.perf_counter() - started))
            else:
                written = {"error": f"interleaf ingest exited {proc.returncode}:\n{out}\n{err}"}
        except subprocess.TimeoutExpired:
            stop(proc)
            written = {"error": f"interleaf ingest ran past {_CORPUS_INGEST_TIMEOUT_S} s"}
        finally:
            with contextlib.suppress(FileNotFoundError):  # the session ended first and removed the folder
                (folder / "first.json.tmp").write_text(json.dumps(written))
                (folder / "first.json.tmp").rename(folder / "first.json")

    threading.Thread(target=outcome, name="corpus-ingest", daemon=True).start()
    return proc


@pytest.fixture(scope="session")
def corpus_warehouse(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> IngestedWarehouse:
    """docs/ and bad/ ingested once with the offline default, as a user would. Under pytest-xdist
    each worker's tests get a copy of their own of the controller's ingest (some write to it:
    answers, reruns)."""
    own = tmp_path_factory.mktemp("corpus") / "warehouse"
    folder = os.environ.get(_CORPUS_INGEST)
    if folder is None:
        return IngestedWarehouse(own, run_cli(own, "ingest", str(corpus / "docs"), str(corpus / "bad")))
    first = Path(folder) / "first.json"
    while not first.exists():
        time.sleep(0.5)
    outcome = json.loads(first.read_text())
    if "error" in outcome:
        pytest.fail(f"the session's ingest of docs/ and bad/ failed: {outcome['error']}")
    shutil.copytree(Path(folder) / "warehouse", own)
    return IngestedWarehouse(own, CliResult(**outcome))


@pytest.fixture
def fresh_pools() -> Iterator[None]:
    """Page-worker pools started by the test itself, and gone after it."""
    from interleaf.runtime.executor import shutdown_pools

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
