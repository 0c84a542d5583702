"""Where page-level work runs: inline, or in a pool of worker processes shared by all documents.

Kept apart from the stages (as datatrove keeps executors apart from pipeline steps): a stage
takes a `map` and does not know whether it is a process pool. What a pool adds to `map` is that
an item can be lost without losing the others: when its worker dies (a crash, the memory cap, the
OOM killer) or runs past its time, the map yields a `Lost` in its place, builds a new pool and
goes on with the remaining items (interleaf/parse/chunks.py decides what a lost item means).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.queues import SimpleQueue
from typing import TypeVar

from interleaf.runtime import interrupt, memory_budget
from interleaf.runtime.children import command_id, die_with_command
from interleaf.runtime.memory_budget import MemoryBudget
from interleaf.stage import Lost

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_pools: dict[tuple[int, int | None, int | None], Pool] = {}
_tokens = itertools.count()  # names an item between the command and the worker that starts it
_starts: SimpleQueue | None = None  # in a page worker: where it says when it begins an item


@dataclass(frozen=True)
class PageLimits:
    """How long and how much a map's items may take (None: no limit).

    `item_timeout_s` is per unit of work: an item with a length (a chunk of pages) gets that many
    times it. `timeout_s` counts from `started` (a `time.monotonic()`): past it no item starts,
    and those left are yielded as `Lost(kind="timeout")`."""

    item_timeout_s: float | None = None
    timeout_s: float | None = None
    started: float = 0.0
    worker_mb: int | None = None  # address-space cap of each worker process
    budget_mb: int | None = None  # the command's processes together (interleaf/runtime/memory_budget.py)

    @property
    def deadline(self) -> float | None:
        return None if self.timeout_s is None else self.started + self.timeout_s

    @property
    def pooled(self) -> bool:
        """Whether an item must run in a worker process: only there can it be cut short or capped."""
        return self.item_timeout_s is not None or self.worker_mb is not None


def shutdown_pools() -> None:
    """Stop the page workers; the next `page_map` starts new ones. Called when parsing is over,
    so that the workers' models are not held in memory while later stages load theirs, and at the
    exit: after a stop without waiting, since the pages in flight are of no use then."""
    if interrupt.requested():
        abandon_pools()
    with _lock:
        for pool in _pools.values():
            pool.executor.shutdown(wait=True, cancel_futures=True)
        _pools.clear()
        _stop_forkserver()


def _stop_forkserver() -> None:
    """The forkserver keeps what it preloaded for the next worker (pymupdf, numpy, the parser:
    135 MB beside a 619-page manual's index, measured): with no pool left it has no one to fork.
    `_stop` is how CPython's own tests stop it; the next pool starts a new one."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    if server is not None and getattr(server, "_forkserver_pid", None) is not None:
        server._stop()


atexit.register(shutdown_pools)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to stop busy workers before Python 3.14
    # (terminate_workers); its `_processes` maps pid -> Process, and shutdown() sets it to None:
    # taken after, it killed nothing, and a hung page ran on (and held the command's exit).
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()


def abandon_pools() -> None:
    """After a stop: pending pages are cancelled and the workers killed, so that a chunk of pages
    in flight cannot hold the exit (its unit is abandoned, nothing of it written). Not under
    `_lock`: the thread that holds it may be the one waiting on these workers."""
    for pool in list(_pools.values()):
        _kill_workers(pool.executor)


interrupt.on_stop(abandon_pools)


def start_worker(
    pid: int, created: float, worker_mb: int | None, budget: MemoryBudget | None, starts: SimpleQueue
) -> None:
    """Page worker initializer: die with the command, hold the memory cap, share the pool's memory
    budget, and say when each item begins (`run_timed`). RLIMIT_AS (address space) rather than a
    watchdog on RSS: it cannot be overshot between two looks, and an allocation past it fails in the
    page that made it (MemoryError), or kills the worker."""
    global _starts
    die_with_command(pid, created)
    if worker_mb is not None:
        cap = worker_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    memory_budget.install(budget)
    _starts = starts


def run_timed(fn: Callable[[T], R], token: int, item: T) -> R:
    """`fn(item)` in a page worker, once it has said it begins: an item's time is counted from
    here, not from when it was handed to the pool. Before this, an item waiting for a worker (behind
    another document's pages, or while a new pool's processes started) was cut for that time: with
    `page_timeout_s=10`, a slow machine lost every page of a document to the start of the pools
    that replaced a killed worker. (`time.monotonic` is the same clock in every process here.)"""
    if _starts is None:
        raise RuntimeError("run_timed runs in a page worker, which start_worker started")
    _starts.put((token, time.monotonic()))
    return fn(item)


@dataclass
class Pool:
    """A process pool, and when each of its items began in a worker."""

    executor: ProcessPoolExecutor
    starts: SimpleQueue
    begun: dict[int, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # two documents' maps share a pool

    def submit(self, fn: Callable[[T], R], item: T) -> tuple[int, Future[R]]:
        token = next(_tokens)
        return token, self.executor.submit(run_timed, fn, token, item)

    def began(self, token: int) -> float | None:
        """When the item `token` began in a worker, once it has."""
        with self.lock:
            self._drain()
            return self.begun.get(token)

    def forget(self, token: int) -> None:
        """An item that ended: its start was written before its result, so it is read here too."""
        with self.lock:
            self._drain()
            self.begun.pop(token, None)

    def _drain(self) -> None:
        while not self.starts.empty():
            name, at = self.starts.get()
            self.begun[name] = at


def process_pool(workers: int, worker_mb: int | None = None, budget_mb: int | None = None) -> Pool:
    with _lock:
        key = (workers, worker_mb, budget_mb)
        if key not in _pools:
            # forkserver: forking a process that runs Prefect's threads can deadlock a child.
            context = multiprocessing.get_context("forkserver")
            # what every worker imports, imported once and shared: PyMuPDF and OpenCV by name, since
            # Interleaf's modules import them at their first use (interleaf/pdf/mupdf.py)
            context.set_forkserver_preload(["interleaf.parse.layout.parser", "pymupdf", "cv2"])
            # one budget a pool: a pool rebuilt after a lost worker does not inherit the room its
            # killed workers had taken and never gave back
            budget = None if budget_mb is None else MemoryBudget(budget_mb, os.getpid(), context)
            # and one queue of starts: a worker killed while it wrote to one would leave its lock held
            starts = context.SimpleQueue()
            executor = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=start_worker,
                initargs=(*command_id(), worker_mb, budget, starts),
            )
            _pools[key] = Pool(executor, starts)
        return _pools[key]


def _replace_pool(broken: Pool, kill: bool) -> None:
    """A new pool in place of `broken`, once: two documents sharing it both see it break."""
    with _lock:
        for key, pool in list(_pools.items()):
            if pool is broken:
                del _pools[key]
    if kill:
        _kill_workers(broken.executor)
    else:
        broken.executor.shutdown(wait=False, cancel_futures=True)


def _units(item: object) -> int:
    try:
        return max(1, len(item))  # type: ignore[arg-type]
    except TypeError:
        return 1


def page_map(
    workers: int, on_result: Callable[[R], None] | None = None, limits: PageLimits = PageLimits()
) -> Callable[[Callable[[T], R], Iterable[T]], Iterator[R | Lost]]:
    """A `map` that runs in `workers` processes (inline when 1 and no item limit is set), calling `on_result` as results
    arrive, in order; once a stop was asked for, it raises `interrupt.Interrupted` between items and
    while it waits for one.
    Inline, an item cannot be cut short: only the deadline is held, between items."""

    def inline(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R | Lost]:
        for item in items:
            if limits.deadline is not None and time.monotonic() > limits.deadline:
                yield timed_out(limits)
                continue
            result = fn(item)
            interrupt.check()
            if on_result is not None:
                on_result(result)
            yield result

    def pooled(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R | Lost]:
        todo = deque(items)
        window: deque[tuple[T, int, Future[R]]] = deque()
        pool = process_pool(workers, limits.worker_mb, limits.budget_mb)

        def submit(item: T) -> None:
            window.append((item, *pool.submit(fn, item)))

        while todo or window:
            # a bounded window, not everything at once: items after the deadline never start
            while todo and len(window) < 2 * workers and not past_deadline(limits.deadline):
                submit(todo.popleft())
            if not window:
                yield from (timed_out(limits) for _ in todo)
                return
            item, token, future = window.popleft()
            try:
                result = _result(future, item, functools.partial(pool.began, token), limits)
            except BrokenProcessPool as exc:
                interrupt.check()  # the workers were killed for a stop, not by this item
                lost = Lost("crashed", f"its worker process died ({exc})")
                pool = _rebuilt(pool, window, fn, workers, limits, kill=False)
            except FutureTimeout:  # `_result` raised Interrupted instead where a stop was asked for
                if past_deadline(limits.deadline):
                    future.cancel()
                    for _, _, other in window:
                        other.cancel()
                    n = 1 + len(window) + len(todo)
                    yield from (timed_out(limits) for _ in range(n))
                    return
                lost = Lost("hung", f"ran past {limits.item_timeout_s:g} s a page; its worker was killed")
                pool = _rebuilt(pool, window, fn, workers, limits, kill=True)
            except MemoryError:
                lost = Lost("memory", f"out of memory under the {limits.worker_mb} MB cap of a page worker")
            else:
                pool.forget(token)
                interrupt.check()  # leaving the loop cancels nothing: pages in flight end on their own
                if on_result is not None:
                    on_result(result)
                yield result
                continue
            pool.forget(token)
            yield lost

    return inline if workers <= 1 and not limits.pooled else pooled


def timed_out(limits: PageLimits) -> Lost:
    return Lost("timeout", f"timeout after {limits.timeout_s:g} s")


def past_deadline(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() > deadline


def wait_s(item: object, limits: PageLimits) -> float | None:
    """How long to wait for `item` from now: its own budget, counted from now (items are waited
    for in order, so the clock of one starts once those before it are done), or until the
    document's deadline. For a map whose items cannot say when they begin (Ray's)."""
    now = time.monotonic()
    waits = []
    if limits.item_timeout_s is not None:
        waits.append(limits.item_timeout_s * _units(item))
    if limits.deadline is not None:
        waits.append(max(0.0, limits.deadline - now))
    return min(waits) if waits else None


# how often a waited-for item is looked at: one not begun yet, for when it begins (its clock starts
# then); any, for a stop: a result that arrives after one is not used (`page_map` checks before
# `on_result`), and a worker killed half-way through sending its result leaves the pool's reader
# waiting for the rest, so that result's future may never end at all
LOOK_S = 0.25


def _result(future: Future[R], item: object, began: Callable[[], float | None], limits: PageLimits) -> R:
    """The item's result; FutureTimeout once it has run past its own budget, counted from when it
    began in a worker (`run_timed`; a page is never cut for time it spent queued), or past the
    document's deadline."""
    budget = None if limits.item_timeout_s is None else limits.item_timeout_s * _units(item)
    while True:
        start = None if budget is None else began()
        ends = [t for t in (limits.deadline, None if start is None else start + budget) if t is not None]
        timeout = None if not ends else max(0.0, min(ends) - time.monotonic())
        timeout = LOOK_S if timeout is None else min(timeout, LOOK_S)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            interrupt.check()
            if (start is not None and time.monotonic() >= start + budget) or past_deadline(limits.deadline):
                raise


def _rebuilt(
    pool: Pool,
    window: deque[tuple[T, int, Future[R]]],
    fn: Callable[[T], R],
    workers: int,
    limits: PageLimits,
    kill: bool,
) -> Pool:
    """After a worker died or was killed: a new pool, and the items in flight that did not finish
    submitted to it (they died with the pool: bystanders, or the culprit, which will die again)."""
    _replace_pool(pool, kill)
    fresh = process_pool(workers, limits.worker_mb, limits.budget_mb)
    for i, (item, _, future) in enumerate(window):
        if not (future.done() and not future.cancelled() and future.exception() is None):
            window[i] = (item, *fresh.submit(fn, item))
    return fresh
