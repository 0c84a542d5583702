"""Prefect homes whose database is already made, for the many short commands of the tests and of
`make faults`, each in a warehouse of its own with a Prefect home of its own.

A command that runs a flow starts a temporary Prefect server. In a new home, that server first
creates its database and registers Prefect's block types: measured here, 11.6 s from the server's
start to the flow's, against 5.0 s in a home holding a copy of a database made once. A copy is what
a user's second command finds in its home, so no command runs another path than a user's.

A test session goes one step further (`share_server`): one server for all its commands, those of
its pytest-xdist workers included, named by `PREFECT_API_URL`, as a user's commands share a
Prefect server they run apart. Each command then starts no server at all: a two-document ingest
took 13.3-15.0 s with its own server, 9.8-10.3 s with the shared one, here. The tests of what
happens to a command's own server (Ctrl-C, kill -9, a full disk under the Prefect home) ask for
`own_server`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from tests.support.scratch import scratch_folder

# the hash of the block types registered, then the database: copied last, its presence says a home is seeded
FILES = ("memo_store.toml", "prefect.db")
_START_AND_STOP = (
    "from prefect.server.api.server import SubprocessASGIServer\n"
    "server = SubprocessASGIServer()\n"
    "server.start(timeout=300)\n"
    "server.stop()\n"
)
# Its stdin is a pipe from the session that started it, closed when that session ends, however it
# ends: a server still coming up then kills its own group at once. Killing the group from the
# session cannot cover every moment: a Ctrl-C that lands in Popen itself, between the fork and the
# return, leaves no Popen to take the pid from (seen once in a test run).
_SERVE = (
    "import os, signal, sys, threading\n"
    "up, closed = threading.Event(), threading.Event()\n"
    "def watch():\n"
    "    sys.stdin.read()\n"
    "    closed.set()\n"
    "    if not up.is_set():\n"
    "        os.killpg(0, signal.SIGKILL)\n"
    "threading.Thread(target=watch, daemon=True).start()\n"
    "from prefect.server.api.server import SubprocessASGIServer\n"
    "address = os.fdopen(os.dup(1), 'w')  # not inherited: the server's own output goes nowhere\n"
    "os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n"
    "server = SubprocessASGIServer()\n"
    "server.start(timeout=300)\n"
    "up.set()\n"
    "address.write(server.api_url + '\\n')\n"
    "address.close()\n"
    "closed.wait()\n"
    "server.stop()\n"
)
_LOCK = threading.Lock()  # two commands of one test may be started at once in the same home
_shared_api_url: str | None = None
_SHARED_URL_VARIABLE = "INTERLEAF_SHARED_PREFECT_API_URL"
_MADE_HOME_VARIABLE = "INTERLEAF_MADE_PREFECT_HOME"


@contextlib.contextmanager
def _group_killed_on_error(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> Iterator[None]:
    """A server started in a session of its own is out of reach of the terminal's Ctrl-C: past a
    timeout, at Ctrl-C or at any error while it is waited for, its whole group is killed here."""
    try:
        yield
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise


@functools.cache
def _made_once() -> Path:
    """A home whose server started and stopped once, its database in one file (no write-ahead log).
    Made once per process tree: a process this one started (a pytest-xdist worker) copies from the
    same home, which the maker removes at its exit (making one took 18 s here, its server's start
    and stop included)."""
    inherited = Path(os.environ.get(_MADE_HOME_VARIABLE) or "/nonexistent")
    if all((inherited / name).is_file() for name in FILES):
        return inherited
    home = scratch_folder("interleaf-prefect-home-")
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    env.pop("PREFECT_API_URL", None)
    # in a session of its own (see _group_killed_on_error)
    with (
        subprocess.Popen(
            [sys.executable, "-c", _START_AND_STOP],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        ) as proc,
        _group_killed_on_error(proc),
    ):
        out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    with sqlite3.connect(home / "prefect.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.environ[_MADE_HOME_VARIABLE] = str(home)
    return home


def cli_env(warehouse: Path, *, own_server: bool = False, **extra: str) -> dict[str, str]:
    """The environment the tests and `make faults` run an `interleaf` command with, in `warehouse`:
    its Prefect home beside it, seeded; the session's shared server unless `own_server`."""
    env = {
        **os.environ,
        "INTERLEAF_WAREHOUSE": str(warehouse),
        "PREFECT_HOME": seeded(warehouse.parent / ".prefect-home"),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
        **extra,
    }
    env.pop("PREFECT_API_URL", None)
    if _shared_api_url is not None and not own_server:
        env["PREFECT_API_URL"] = _shared_api_url
    return env


def adopt_shared_server() -> bool:
    """Whether the commands `cli_env` describes use a shared server: this process's, or the one a
    process that started this one shares (a pytest-xdist worker, `make faults`' disk-full cases).
    Starts none."""
    global _shared_api_url
    if _shared_api_url is None:
        _shared_api_url = os.environ.get(_SHARED_URL_VARIABLE) or None
    return _shared_api_url is not None


def share_server() -> None:
    """Start the one Prefect server the commands `cli_env` describes use from now on, in a session
    of its own; it stops when this process ends (its stdin closes), and its group is killed if not."""
    global _shared_api_url
    if adopt_shared_server():
        return
    home = scratch_folder("interleaf-prefect-shared-")
    env = {**os.environ, "PREFECT_HOME": seeded(home / "home"), "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    with _group_killed_on_error(proc):
        api_url = proc.stdout.readline().strip() if proc.stdout else ""
    if not api_url.startswith("http"):
        os.killpg(proc.pid, signal.SIGKILL)
        raise RuntimeError(f"the shared Prefect server did not start (exit {proc.wait()})")

    def stop() -> None:
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    atexit.register(stop)  # run before scratch_folder's removal of `home`, registered earlier
    _shared_api_url = os.environ[_SHARED_URL_VARIABLE] = api_url


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
