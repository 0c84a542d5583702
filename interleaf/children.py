"""No process a command starts outlives it, `kill -9` of the command included.

Two kinds of children, two ways:

- Page workers (`interleaf/executor.py`) are forked by multiprocessing's forkserver. Neither
  notices the command's death by itself: each worker holds the forkserver's "alive" pipe (and its
  task queue's write end), so the forkserver waits for the workers and the workers for work. So
  each worker watches the command's process (pid and start time) from a thread and kills itself
  within WATCH_S of its end; the forkserver and the resource tracker then see their pipes close
  and exit. A parent-death signal (Linux prctl) is set too, for a forkserver that dies first.
- Prefect's temporary API server is started by Prefect, from whichever thread first needs a
  client, in the command's process group: a terminal's Ctrl-C reached it too and it quit under the
  running flow (the ConnectError tracebacks), and nothing stopped it after a `kill -9`. Prefect
  takes its server from `SubprocessASGIServer._instances[None]` (the hook its own test harness
  uses), so `install_prefect_server` puts there a subclass that starts the same uvicorn command
  through `python -m interleaf.children`: in its own session (the terminal's signals are the
  command's to handle) and watching its parent. A parent-death signal would not do here: it fires
  when the *thread* that forked the child ends, and Prefect may start the server from a worker
  thread. Moving the command itself into a new process group was rejected: in a terminal it would
  leave the foreground group and stop receiving Ctrl-C.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import psutil

PR_SET_PDEATHSIG = 1
WATCH_S = 0.5
_watched: list[type] = []  # the server class, made on first use: importing prefect costs a second


def command_id() -> tuple[int, float]:
    """This process as a worker's initializer arguments: pid and start time (pids are reused)."""
    return os.getpid(), psutil.Process().create_time()


def die_with_command(pid: int, created: float) -> None:
    """Page worker initializer: Ctrl-C is the command's to handle; end when the command ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    threading.Thread(target=_watch_command, args=(pid, created), name="watch-command", daemon=True).start()


def _running(pid: int, created: float) -> bool:
    try:
        process = psutil.Process(pid)
        return process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _watch_command(pid: int, created: float) -> None:
    while _running(pid, created):
        time.sleep(WATCH_S)
    os.kill(os.getpid(), signal.SIGKILL)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os.kill(os.getpid(), signal.SIGKILL)  # reparented: the command is gone, and so is any client


def install_prefect_server() -> None:
    """Make Prefect start its temporary server as described above (idempotent, starts nothing)."""
    from prefect.server.api.server import SubprocessASGIServer

    class WatchedServer(SubprocessASGIServer):
        def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
            import prefect
            from prefect.settings import get_current_settings

            # the same command and environment Prefect's own method uses, behind our launcher
            uvicorn = [
                *("--app-dir", str(prefect.__module_path__.parent), "--factory"),
                *("prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port)),
                *("--log-level", "error", "--lifespan", "on"),
            ]
            return subprocess.Popen(
                [sys.executable, "-m", "interleaf.children", str(os.getpid()), "uvicorn", *uvicorn],
                env={
                    **os.environ,
                    "PREFECT_UI_ENABLED": "0",
                    "PREFECT__SERVER_EPHEMERAL": "1",
                    "PREFECT__SERVER_FINAL": "1",
                    **get_current_settings().to_environment_variables(exclude_unset=True),
                },
                start_new_session=True,
            )

    current = SubprocessASGIServer._instances.get(None)
    if current is not None and (current.running or isinstance(current, tuple(_watched))):
        return
    SubprocessASGIServer._instances.pop(None, None)
    _watched.append(WatchedServer)
    WatchedServer()  # registers itself as the instance for port None


def main(argv: list[str]) -> None:
    """`python -m interleaf.children PARENT_PID MODULE ARGS...`: run MODULE as `python -m` would,
    killed within WATCH_S once PARENT_PID is no longer its parent."""
    parent, module, args = int(argv[0]), argv[1], argv[2:]
    if os.getppid() != parent:
        raise SystemExit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
