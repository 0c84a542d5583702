"""Temporary folders of the test sessions and `make faults`: a Prefect home, the session's corpus
ingest. Each is removed at its process's exit, but a process killed (kill -9, or a Ctrl-C before the
exit handler was registered) leaves its folder behind: the tests that stop a session on purpose left
two shared Prefect homes in /tmp on every `make test`. So each folder is named for the process that
made it, and a new one is made only after those of processes gone for good are removed.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path

import psutil

# A folder is left alone while it changes: its owner's pid may be of another pid namespace sharing
# /tmp, whose live process looks gone from here. A test session's folders change within minutes.
IDLE_S = 3600


def scratch_folder(prefix: str) -> Path:
    """A new folder `<tmp>/<prefix><pid>-<random>`, removed at this process's exit; the idle folders
    of `prefix` whose process is gone are removed first."""
    sweep(prefix)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def sweep(prefix: str) -> list[Path]:
    """Remove the folders of `prefix` whose process is gone and that no file in changed for IDLE_S."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = folder.name.removeprefix(prefix).split("-", 1)[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)) and _idle(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _idle(folder: Path) -> bool:
    try:
        newest = max((p.stat().st_mtime for p in (folder, *folder.rglob("*"))), default=0.0)
    except OSError:  # removed meanwhile, by its owner or another sweep
        return False
    return time.time() - newest > IDLE_S
