"""Ctrl-C and SIGTERM for the long commands (ingest, run --from, answer, eval, ask).

The first signal only sets a flag: `run_unit` starts no new unit once it is set, the page map
stops between results, and a unit cut short ends `interrupted` in the ledger with nothing written
(the warehouse writes parts atomically, the commit part last). After a grace period the page
workers are stopped, so that a long chunk of pages cannot hold the exit past a few seconds. The
command then prints one line and exits 130. A second signal exits at once, still 130: the children
die with the process (see `interleaf/runtime/children.py`). So does whatever still runs HARD_S after
the first signal (a flow's teardown or a server's stop slowed by a busy machine): the stop is a
promise of seconds, and an exit at any point leaves nothing half-written (parts are written under a
temporary name, then renamed; the next command closes the ledger rows of a process that is gone).

Logging is switched off at the first signal: what Prefect's engines report about a stop we asked
for (crashed task runs, the temporary server going away) is not news to the user, and it arrives
as tracebacks. For the same reason nothing follows the `interrupted:` line on stderr: what a thread
reports to the terminal while the command runs (its Prefect server's errors) goes through `say`,
which prints nothing once a stop was asked for, and `on_signal` actions, run at the first signal,
turn off what prints by other means (the worker output a Ray driver forwards).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

EXIT_CODE = 130
GRACE_S = 3.0  # running units get this long to finish before their page workers are stopped
# then the command exits however far its own ending got: the bound the stop tests hold it to
# (tests/test_interrupt.py, benchmarks/repeat_interrupt.py), less the time an exit takes
HARD_S = 8.0
RESUME = "run the same command again to resume"

_stop = threading.Event()
_on_signal: list[Callable[[], None]] = []
_on_stop: list[Callable[[], None]] = []
# held while the `interrupted:` line or a `say` is printed: a `say` that began before the signal
# ends before that line, and one that begins after it prints nothing
_printing = threading.Lock()
_told = threading.Event()  # the `interrupted:` line is out


class Interrupted(Exception):
    """Raised where work notices the stop flag: not an error, so no command reports it as one."""


def requested() -> bool:
    return _stop.is_set()


def check() -> None:
    """Raise `Interrupted` when a stop was asked for: called before each unit and between pages."""
    if _stop.is_set():
        raise Interrupted("interrupted")


def on_signal(action: Callable[[], None]) -> None:
    """Run `action` (from a helper thread) at once after the first signal."""
    _on_signal.append(action)


def on_stop(action: Callable[[], None]) -> None:
    """Run `action` (from a helper thread) once the grace period after the first signal is over."""
    _on_stop.append(action)


def say(text: str) -> bool:
    """Print `text` to stderr unless a stop was asked for -> whether it was printed. For what other
    threads than the command's report while it runs: none of it follows the `interrupted:` line."""
    with _printing:
        if _stop.is_set():
            return False
        print(text, file=sys.stderr, flush=True)
        return True


def _handler(signum: int, frame: FrameType | None) -> None:
    if _stop.is_set():  # the second signal: no more waiting
        _exit()
    _stop.set()
    logging.disable(logging.CRITICAL)
    threading.Thread(target=_stopping, name="interleaf-stop", daemon=True).start()


def _stopping() -> None:
    _run(_on_signal)
    threading.Event().wait(GRACE_S)
    _run(_on_stop)
    threading.Event().wait(HARD_S - GRACE_S)
    _exit_now()


def _exit_now() -> None:
    """What a second signal does, with the line when the command has not printed it yet. The lock is
    waited for briefly: a `say` blocked on a full pipe must not hold the exit."""
    if _printing.acquire(timeout=1.0):
        if not _told.is_set():
            with contextlib.suppress(OSError, ValueError):
                print(_line(""), file=sys.stderr, flush=True)
        _printing.release()
    _exit()


def _exit() -> None:
    """`os._exit`, once the named semaphores of this process are released. A page pool's queues and
    locks are named (the forkserver's workers open them by name); the normal exit unlinks them in
    multiprocessing's exit finalizers, and `os._exit` skips those: the resource tracker then prints a
    warning about leaked semaphores after the `interrupted:` line. The finalizers run in a thread,
    waited for briefly, so that one stuck on a lock cannot hold the exit."""
    util = sys.modules.get("multiprocessing.util")  # not imported: no semaphore to release
    if util is not None:
        # `_run_finalizers(0)` is the first step of multiprocessing's own exit (`util._exit_function`)
        releasing = threading.Thread(target=util._run_finalizers, args=(0,), daemon=True)
        releasing.start()
        releasing.join(timeout=1.0)
    os._exit(EXIT_CODE)


def _run(actions: list[Callable[[], None]]) -> None:
    for action in actions:
        # one that fails (what it stops has ended meanwhile) must neither keep the others from
        # running nor print a thread's traceback under the stop
        with contextlib.suppress(Exception):
            action()


def arm() -> None:
    """Install the handlers (main thread only). Prefect's flow engine swaps SIGTERM for its own
    bridge while a flow runs, so a flow body calls this again to take it back."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)


@contextmanager
def handling() -> Iterator[None]:
    """Around a command (armed or not): a stop ends it with exit code 130 and no traceback, whether the
    command noticed it (an `Interrupted` raised) or finished what was running first."""
    try:
        yield
    except Interrupted:
        stopped()
    except SystemExit as exc:
        if _stop.is_set() and exc.code != EXIT_CODE:  # a unit cut short made the command fail
            stopped()
        raise
    if _stop.is_set():
        stopped()


def stopped(kept: str = "") -> None:
    """Print the one line and exit 130. `kept`: what the command committed before the stop."""
    sys.stdout.flush()
    with _printing:
        print(_line(kept), file=sys.stderr, flush=True)
        _told.set()
    raise SystemExit(EXIT_CODE)


def _line(kept: str) -> str:
    return f"interrupted: {kept or 'what finished before the stop is kept'}; {RESUME}"
