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

What the budget does not do: stop a detection that runs alone. A detection that does not fit even
alone still runs: most of what the rest of the command holds would not shrink by waiting. Logged
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

from interleaf.heap import return_freed_memory

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

    @contextlib.contextmanager
    def room_for(self, mb: float) -> Iterator[None]:
        while not self._admitted(mb):
            time.sleep(_POLL_S)
        try:
            yield
        finally:
            # malloc keeps what a detection freed for the process's next allocations: handed back
            # now, not at the end of the read, or the room given back would still be held
            return_freed_memory()
            with self._lock:
                self._promised_mb.value -= mb
                self._running.value -= 1

    def _admitted(self, mb: float) -> bool:
        with self._lock:
            if self._running.value and tree_pss_mb(self.root_pid) + self._promised_mb.value + mb > self.budget_mb:
                return False
            self._promised_mb.value += mb
            self._running.value += 1
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
