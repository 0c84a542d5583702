"""A memory budget for a command and the processes it started, together (`parse.memory_budget_mb`).

Most of an ingest's memory is steady: the Prefect server, the command, the page workers and their
models. What rises and falls is OCR's text detection, whose working memory grows with its input:
RapidOCR's detector took 150-230 MB a megapixel here, from +64 MB for a 1280x256 crop to +996 MB for
a 3840x1792 scan (8 sizes, one process). Two page workers detecting at once made the ingest's
highest peaks.

So under a budget, a detection in a page worker waits for room. It starts at once when no other
detection is running, and otherwise when the summed PSS of the command's process tree, plus the
estimates of the detections running, plus its own estimate, fits in the budget. The running ones'
memory is counted twice (in the PSS and in their estimates), which errs on the side of waiting. A
detection takes 0.1-3.2 s for those 8 sizes, and the recognition of its lines runs on both workers
unbudgeted, so the wait costs less than one OCR lane would.

A detection that does not fit even alone still runs: most of what the rest of the command holds
would not shrink by waiting. But it runs alone in the page workers: the other worker's model runs
(layout, line recognition, another detection) wait until it ends, and it starts once those already
running have ended, so the other worker holds only what it keeps between two runs (a worker
hands back what malloc kept for it before it waits for room, see `_wait`). Logged
during one ingest of docs/ + scale/ under a 1,536 MB budget, a whole page scanned at 200 dpi (a
~700 MB estimate) started alone with the tree at 1,234-1,426 MB, and the tree reached 1,750-1,800 MB
(then, the command's process was also encoding a long manual: 630 of those MB). So under a budget
no document is indexed while the page workers run (flows/ingest.py); and, budget or not, the
command's process no longer imports PyMuPDF or OpenCV (interleaf/pdf/mupdf.py). The hard cap is
each worker's own, `parse.limits.max_worker_mb`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Any

import psutil

from interleaf.runtime.heap import return_freed_memory

# RapidOCR's detector, in MB per megapixel of its input: the largest of the 8 sizes above (229, for
# 1024x512), on this stack (rapidocr 3.10, its bundled PP-OCRv6_det_small, one ONNX Runtime thread). Larger
# makes detections wait more often, smaller lets two run at once past the budget; other values
# were not tried on the bench.
DETECTOR_MB_PER_MPX = 230.0
_POLL_S = 0.05  # what a waiting detection sleeps between two looks (a detection takes 0.1 s and more)


def tree_pss_mb(root_pid: int) -> float:
    """The summed PSS of `root_pid` and its descendants, MB (shared pages split between sharers,
    so a page the forkserver and its workers share is counted once in all)."""
    try:
        processes = [psutil.Process(root_pid)]
        processes += processes[0].children(recursive=True)
    except psutil.NoSuchProcess:
        return 0.0
    total_kb = 0
    for process in processes:
        # a process that ended meanwhile holds nothing
        with contextlib.suppress(OSError), open(f"/proc/{process.pid}/smaps_rollup", "rb") as rollup:
            total_kb += next((int(line.split()[1]) for line in rollup if line.startswith(b"Pss:")), 0)
    return total_kb / 1024


class MemoryBudget:
    """Room for the page workers' detections, shared by the workers of one pool (made by the pool's
    owner, handed to each worker at its start)."""

    def __init__(self, budget_mb: int, root_pid: int, context: Any) -> None:
        self.budget_mb = budget_mb
        self.root_pid = root_pid
        self._lock = context.Lock()
        self._promised_mb = context.Value("d", 0.0, lock=False)  # under _lock
        self._running = context.Value("i", 0, lock=False)
        self._alone = context.Value("i", 0, lock=False)  # a detection past the budget even alone runs, or waits to
        self._steps = context.Value("i", 0, lock=False)  # the workers' other model runs in progress

    @contextlib.contextmanager
    def room_for(self, mb: float) -> Iterator[None]:
        waited = False
        while (alone := self._admitted(mb)) is None:
            waited = _wait(waited)
        try:
            while alone and self._steps.value:
                time.sleep(_POLL_S)
            yield
        finally:
            # malloc keeps what a detection freed for the process's next allocations: handed back
            # now, not at the end of the read, or the room given back would still be held
            return_freed_memory()
            with self._lock:
                self._promised_mb.value -= mb
                self._running.value -= 1
                if alone:
                    self._alone.value = 0

    def _admitted(self, mb: float) -> bool | None:
        """None: not yet; else admitted, and whether it must run alone (past the budget even so)."""
        with self._lock:
            if self._alone.value:
                return None
            in_use = tree_pss_mb(self.root_pid) + self._promised_mb.value + mb
            if self._running.value and in_use > self.budget_mb:
                return None
            alone = in_use > self.budget_mb
            self._alone.value = int(alone)
            self._promised_mb.value += mb
            self._running.value += 1
            return alone

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """A model run of a page worker other than a detection: it waits while a detection runs alone."""
        waited = False
        while True:
            with self._lock:
                if not self._alone.value:
                    self._steps.value += 1
                    break
            waited = _wait(waited)
        try:
            yield
        finally:
            with self._lock:
                self._steps.value -= 1


def _wait(waited: bool) -> bool:
    """One look's sleep of a worker waiting for room. Before the first, it hands back what it freed:
    malloc keeps a layout run's activations until the next OCR read or the end of the pages (a
    trim after each of three layout runs in one process returned 83, 47 and 48 MB), and what the
    waiting worker holds is part of what the others wait on."""
    if not waited:
        return_freed_memory()
    time.sleep(_POLL_S)
    return True


_budget: MemoryBudget | None = None  # this process's, when it is a page worker of a budgeted pool


def install(budget: MemoryBudget | None) -> None:
    global _budget
    _budget = budget


def room_for_detection(input_shape: tuple[int, ...]) -> contextlib.AbstractContextManager[None]:
    """Waits for room for RapidOCR's detector on an input of `input_shape` (..., height, width);
    at once outside a budgeted page worker."""
    if _budget is None:
        return contextlib.nullcontext()
    return _budget.room_for(DETECTOR_MB_PER_MPX * math.prod(input_shape[-2:]) / 1e6)


def budgeted() -> bool:
    """Whether this process is a page worker of a budgeted pool."""
    return _budget is not None


def model_step() -> contextlib.AbstractContextManager[None]:
    """Waits while another worker's detection runs alone (see MemoryBudget.step); at once outside a
    budgeted page worker."""
    if _budget is None:
        return contextlib.nullcontext()
    return _budget.step()
