"""Where page-level work runs: inline, or in a pool of worker processes shared by all documents.

Kept apart from the stages (as datatrove keeps executors apart from pipeline steps): a stage
takes a `map` and does not know whether it is a process pool.
"""

from __future__ import annotations

import atexit
import multiprocessing
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from interleaf import interrupt
from interleaf.children import command_id, die_with_command

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_pools: dict[int, ProcessPoolExecutor] = {}


def shutdown_pools() -> None:
    """Stop the page workers; the next `page_map` starts new ones. Called when parsing is over,
    so that the workers' models are not held in memory while later stages load theirs."""
    with _lock:
        for pool in _pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        _pools.clear()


atexit.register(shutdown_pools)


def abandon_pools() -> None:
    """After a stop: pending pages are cancelled and the workers killed, so that a chunk of pages
    in flight cannot hold the exit (its unit is abandoned, nothing of it written). Not under
    `_lock`: the thread that holds it may be the one waiting on these workers."""
    for pool in list(_pools.values()):
        pool.shutdown(wait=False, cancel_futures=True)
        # ProcessPoolExecutor has no public way to stop busy workers before Python 3.14
        # (terminate_workers); its `_processes` maps pid -> Process.
        for process in list((pool._processes or {}).values()):
            process.kill()


interrupt.on_stop(abandon_pools)


def process_pool(workers: int) -> ProcessPoolExecutor:
    with _lock:
        if workers not in _pools:
            # forkserver: forking a process that runs Prefect's threads can deadlock a child.
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["interleaf.parse.layout.parser"])
            _pools[workers] = ProcessPoolExecutor(
                max_workers=workers, mp_context=context, initializer=die_with_command, initargs=command_id()
            )
        return _pools[workers]


def page_map(
    workers: int, on_result: Callable[[R], None] | None = None
) -> Callable[[Callable[[T], R], Iterable[T]], Iterator[R]]:
    """A `map` that runs in `workers` processes (inline when 1), calling `on_result` as results
    arrive, in order; it raises `interrupt.Interrupted` between pages once a stop was asked for."""

    def mapper(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        results = map(fn, items) if workers <= 1 else process_pool(workers).map(fn, items)
        for result in results:
            interrupt.check()  # leaving the loop closes `results`, which cancels the pages not begun
            if on_result is not None:
                on_result(result)
            yield result

    return mapper
