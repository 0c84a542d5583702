"""A page that runs past `page_timeout_s` has its worker killed, as its reject says: before, the
pool's worker map was read after `shutdown()` had dropped it, nothing was killed, and the hung
page (the fuzz fault's decompression bomb: minutes a pass) ran on and held the command's exit."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from interleaf.runtime.executor import PageLimits, page_map, process_pool
from interleaf.stage import Lost


def sleep_after_naming_the_worker(path: Path) -> int:
    """Module-level, for the workers: writes its process id, then sleeps far past the limit.
    (A Path, not a str: an item with a length gets that many times the page timeout.)"""
    path.write_text(str(os.getpid()))
    time.sleep(600)
    return 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has exited: only its parent's wait is missing


@pytest.mark.usefixtures("fresh_pools")
def test_a_page_past_its_timeout_has_its_worker_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    [result] = page_map(1, limits=PageLimits(item_timeout_s=5))(sleep_after_naming_the_worker, [pid_file])
    assert isinstance(result, Lost) and result.kind == "hung"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), f"the hung page's worker {pid} still runs"


def forkserver_pid(_: object) -> int:
    """Module-level, for the workers: the process that forked this worker."""
    return os.getppid()


@pytest.mark.usefixtures("fresh_pools")
def test_the_forkserver_goes_with_the_last_pool() -> None:
    """It holds what it preloaded for the next worker (135 MB measured beside an index): once the
    pools are shut, nothing is left to fork, and the next pool starts a new one."""
    from interleaf.runtime.executor import shutdown_pools

    [server] = set(page_map(2, limits=PageLimits(item_timeout_s=60))(forkserver_pid, [1, 2]))
    assert _alive(server)
    shutdown_pools()
    deadline = time.monotonic() + 10
    while _alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(server), f"the forkserver {server} outlived its pools"
    [again] = set(page_map(2, limits=PageLimits(item_timeout_s=60))(forkserver_pid, [1]))
    assert again != server and _alive(again)


def sleep_then_name(seconds: float) -> float:
    """Module-level, for the workers: sleeps, then says how long."""
    time.sleep(seconds)
    return seconds


@pytest.mark.usefixtures("fresh_pools")
def test_a_page_is_timed_from_when_it_begins_not_while_it_waits_for_a_worker() -> None:
    """Two documents share one worker: the second's page waits ~4 s behind the first's, then
    takes 0.2 s of its 2 s. Timed from when it was handed to the pool (as before), it was cut as
    hung and took the first document's page down with its worker."""
    first: list[object] = []
    slow = threading.Thread(
        target=lambda: first.extend(page_map(1, limits=PageLimits(item_timeout_s=60))(sleep_then_name, [4.0]))
    )
    slow.start()
    time.sleep(1.0)  # the first document's page has the worker (its start included)
    second = list(page_map(1, limits=PageLimits(item_timeout_s=2))(sleep_then_name, [0.2]))
    slow.join()
    assert first == [4.0] and second == [0.2], (first, second)
    assert process_pool(1).begun == {}  # each start is forgotten with its item
