"""No process a command starts outlives it, `kill -9` of the command included.

Two kinds of children, two ways:

- Page workers (`interleaf/runtime/executor.py`) are forked by multiprocessing's forkserver. Neither
  notices the command's death by itself: each worker holds the forkserver's "alive" pipe (and its
  task queue's write end), so the forkserver waits for the workers and the workers for work. So
  each worker watches the command's process (pid and start time) from a thread and kills itself
  within WATCH_S of its end; the forkserver and the resource tracker then see their pipes close
  and exit. A parent-death signal (Linux prctl) is set too, for a forkserver that dies first.
- Prefect's temporary API server, when no Prefect API is named, is started by the command before
  its flow (`interleaf/runtime/prefect_server.py`) through `python -m interleaf.runtime.children`: in its own
  session (a terminal's Ctrl-C is the command's to handle; it reached Prefect's own server, in the
  command's process group, which quit under the running flow), watching its parent, its output to
  a log file rather than the command's terminal (`interleaf/runtime/prefect_server.py` says why). A
  parent-death signal would not do here: it fires when the *thread* that forked the child ends.
  Moving the command itself into a new process group was rejected: in a terminal it would leave
  the foreground group and stop receiving Ctrl-C.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys
import threading
import time

import psutil

PR_SET_PDEATHSIG = 1
WATCH_S = 0.5


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


def main(argv: list[str]) -> None:
    """`python -m interleaf.runtime.children PARENT_PID MODULE ARGS...`: run MODULE as `python -m` would,
    killed within WATCH_S once PARENT_PID is no longer its parent."""
    parent, module, args = int(argv[0]), argv[1], argv[2:]
    if os.getppid() != parent:
        raise SystemExit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
