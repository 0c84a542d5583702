"""A progress bar in pages/s for long work, shared by the tasks of one process."""

from __future__ import annotations

import sys
import threading
import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:5.1f} {self.unit}/s")


class PageProgress:
    """Counts pages; draws a bar only on a terminal (CI logs get one summary line instead)."""

    def __init__(self, total: int, label: str = "parse", enabled: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        if self.enabled and total:
            self._progress = Progress(
                TextColumn(f"[bold]{label}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("pages"),
                RateColumn("pages"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._task = self._progress.add_task(label, total=total)
            self._progress.start()

    def advance(self, pages: int) -> None:
        with self._lock:
            self.done += pages
            if self._progress is not None:
                self._progress.advance(self._task, pages)

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


_current: PageProgress | None = None


def set_current(progress: PageProgress | None) -> None:
    global _current
    _current = progress


def advance(pages: int) -> None:
    if _current is not None:
        _current.advance(pages)
