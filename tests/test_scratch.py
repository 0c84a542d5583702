"""Scratch folders left by killed processes are removed by the next one (tests/support/scratch.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scratch import IDLE_S, sweep

REPO = Path(__file__).resolve().parent.parent

# makes its scratch folder, says where, then waits to be killed
MAKER = """
from tests.support.scratch import scratch_folder
folder = scratch_folder("interleaf-scratch-test-")
(folder / "home").mkdir()
(folder / "home" / "prefect.db").write_bytes(b"x" * 100)
print(folder, flush=True)
input()
"""


def _maker() -> tuple[subprocess.Popen[bytes], Path]:
    maker = subprocess.Popen([sys.executable, "-c", MAKER], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert maker.stdout is not None
    return maker, Path(maker.stdout.readline().decode().strip())


def _killed_maker() -> Path:
    maker, folder = _maker()
    maker.send_signal(signal.SIGKILL)  # its exit handler never runs
    maker.wait()
    return folder


def _age(folder: Path, seconds: float) -> None:
    then = time.time() - seconds
    for path in (folder, *folder.rglob("*")):
        os.utime(path, (then, then))


@pytest.fixture
def left() -> Iterator[Path]:
    folder = _killed_maker()
    yield folder
    if folder.exists():  # the test failed: not left in /tmp
        _age(folder, 2 * IDLE_S)
        sweep("interleaf-scratch-test-")


def test_a_killed_process_leaves_its_folder_and_the_next_sweep_removes_it_once_idle(left: Path) -> None:
    assert (left / "home" / "prefect.db").is_file()  # kill -9: no exit handler ran
    assert sweep("interleaf-scratch-test-") == []  # changed a moment ago: it may be another namespace's
    _age(left, IDLE_S + 60)
    assert sweep("interleaf-scratch-test-") == [left]
    assert not left.exists()


def test_the_folder_of_a_live_process_is_kept_however_old() -> None:
    maker, folder = _maker()
    try:
        _age(folder, 2 * IDLE_S)
        assert folder not in sweep("interleaf-scratch-test-") and folder.is_dir()
    finally:
        maker.communicate(b"\n", timeout=30)
    assert not folder.exists()  # its own exit removed it
