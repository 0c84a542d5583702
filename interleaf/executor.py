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


def process_pool(workers: int) -> ProcessPoolExecutor:
    with _lock:
        if workers not in _pools:
            # forkserver: forking a process that runs Prefect's threads can deadlock a child.
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["interleaf.parse.layout.parser"])
            _pools[workers] = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        return _pools[workers]


def page_map(
    workers: int, on_result: Callable[[R], None] | None = None
) -> Callable[[Callable[[T], R], Iterable[T]], Iterator[R]]:
    """A `map` that runs in `workers` processes (inline when 1), calling `on_result` as results
    arrive, in order."""

    def mapper(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        results = map(fn, items) if workers <= 1 else process_pool(workers).map(fn, items)
        for result in results:
            if on_result is not None:
                on_result(result)
            yield result

    return mapper
