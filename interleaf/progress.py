"""Progress of long work, shared by the tasks of one process: a bar in pages/s on a terminal, and
one line per finished unit of work (a document's stage, a question set's stage) where no terminal
shows the bar, so that a CI log or `2>&1 | tee` says what is done and how long it took. Both go to
stderr: stdout keeps only the result (`--json` stays parseable).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Protocol, TypeVar

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


class Finished(Protocol):
    """What a finished unit of work reports (tasks.stage_task.UnitResult)."""

    stage: str
    status: str
    rejects: int
    reason: str | None
    counts: dict[str, int]


F = TypeVar("F", bound=Finished)


class StageLines:
    """One line per unit of work finished, to stderr when stderr is not a terminal (where a
    terminal would show the bar): `parse dpr-emnlp2020.pdf: ok, 14 pages, 140 quotes (31.2 s)`."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = not sys.stderr.isatty() if enabled is None else enabled
        self._lock = threading.Lock()

    def done(self, name: str, result: Finished, seconds: float) -> None:
        if not self.enabled:
            return
        details = [f"{n} {k}" for k, n in result.counts.items()] if result.status == "ok" else []
        details += [f"{result.rejects} rejects"] if result.rejects else []
        details += [result.reason] if result.reason else []
        line = f"{result.stage} {name}: {', '.join([result.status, *details])} ({seconds:.1f} s)"
        with self._lock:
            print(line, file=sys.stderr, flush=True)


_lines = StageLines()


def unit_done(name: str, result: F, started: float) -> F:
    """Report a unit of work finished (a line in a log; nothing on a terminal); -> the result."""
    _lines.done(name, result, time.perf_counter() - started)
    return result


_current: PageProgress | None = None


def set_current(progress: PageProgress | None) -> None:
    global _current
    _current = progress


def advance(pages: int) -> None:
    if _current is not None:
        _current.advance(pages)


def note(line: str) -> None:
    """A line the user must see whatever the output is (a damaged part found, ...): on stderr,
    above the bar when one is drawn."""
    bar = _current._progress if _current is not None else None
    if bar is not None:
        bar.console.print(line, markup=False, highlight=False)
    else:
        print(line, file=sys.stderr, flush=True)
