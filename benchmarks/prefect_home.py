"""Prefect homes whose database is already made, for the many short commands of the tests and of
`make faults`, each in a warehouse of its own with a Prefect home of its own.

A command that runs a flow starts a temporary Prefect server. In a new home, that server first
creates its database and registers Prefect's block types: measured here, 11.6 s from the server's
start to the flow's, against 5.0 s in a home holding a copy of a database made once. A copy is what
a user's second command finds in its home, so no command runs another path than a user's.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# the hash of the block types registered, then the database: copied last, its presence says a home is seeded
FILES = ("memo_store.toml", "prefect.db")
_START_AND_STOP = (
    "from prefect.server.api.server import SubprocessASGIServer\n"
    "server = SubprocessASGIServer()\n"
    "server.start(timeout=300)\n"
    "server.stop()\n"
)
_LOCK = threading.Lock()  # two commands of one test may be started at once in the same home


@functools.cache
def _made_once() -> Path:
    """A home whose server started and stopped once, its database in one file (no write-ahead log)."""
    home = Path(tempfile.mkdtemp(prefix="interleaf-prefect-home-"))
    atexit.register(shutil.rmtree, home, True)
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    env.pop("PREFECT_API_URL", None)
    # in a session of its own: past the timeout or at Ctrl-C, the server it started goes with it
    with subprocess.Popen(
        [sys.executable, "-c", _START_AND_STOP],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=600)
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    with sqlite3.connect(home / "prefect.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return home


def cli_env(warehouse: Path, **extra: str) -> dict[str, str]:
    """The environment the tests and `make faults` run an `interleaf` command with, in `warehouse`:
    its Prefect home beside it, seeded."""
    return {
        **os.environ,
        "INTERLEAF_WAREHOUSE": str(warehouse),
        "PREFECT_HOME": seeded(warehouse.parent / ".prefect-home"),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
        **extra,
    }


def seeded(home: Path) -> str:
    """`home`, given a copy of the made database when it has none yet -> its path, for PREFECT_HOME."""
    with _LOCK:
        if not (home / "prefect.db").exists():
            home.mkdir(parents=True, exist_ok=True)
            made = _made_once()
            for name in FILES:
                partial = home / f".{name}.partial"
                shutil.copyfile(made / name, partial)
                os.replace(partial, home / name)
    return str(home)
