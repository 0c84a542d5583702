"""Progress of long work, shared by the tasks of one process. On a terminal: a bar of the pages to
parse, in pages/s, and a row per unit of page work running (a document's parse or describe, pages
done of pages). Where no terminal shows them, so that a CI log or `2>&1 | tee` says where a long
document is: a line per such unit every LINE_EVERY_S, and one per finished unit of work (a
document's stage, a question set's stage) saying what it did and how long it took. All of it goes
to stderr: stdout keeps only the result (`--json` stays parseable).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from interleaf.runtime import interrupt

# a unit's line at most this often where no terminal shows its row, the first this long after its
# start: a pulse in a log for a long document, not a line per run of pages (a 400-page manual saves
# 50 of them), and none beside a short one's `unit_done` line
LINE_EVERY_S = 5.0


class RateColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:5.1f} {self.unit}/s")


class PageProgress:
    """Counts pages: a live display only on a terminal, lines where there is none. `overall`: the
    display shows the bar of all `total` pages, not only the units' rows (one document's row says
    as much)."""

    def __init__(self, total: int, label: str = "parse", enabled: bool | None = None, overall: bool = True) -> None:
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._rows: dict[str, TaskID] = {}  # a unit's row on the display
        self._said: dict[str, float] = {}  # when a unit's last line was printed, with no display
        self._parsed: dict[str, int] = {}  # the pages of each parse unit counted into `done`
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("pages"),
                RateColumn("pages"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task(label, total=total, visible=overall and total > 0)
            self._progress.start()

    def advance(self, pages: int) -> None:
        with self._lock:
            self._advance(pages)

    def _advance(self, pages: int) -> None:
        self.done += pages
        if self._progress is not None:
            self._progress.advance(self._task, pages)

    def pages(self, stage: str, name: str, done: int, total: int, started: float) -> None:
        """Unit `stage name` has `done` of its `total` pages (parse: saved; describe: read)."""
        row = f"{stage} {name}"
        now = time.perf_counter()
        with self._lock:
            if stage == "parse":  # the bar counts every document's pages parsed, resumed ones too
                self._advance(done - self._parsed.get(row, 0))
                self._parsed[row] = done
            if self._progress is not None:
                if row in self._rows:
                    self._progress.update(self._rows[row], total=total, completed=done)
                else:
                    self._rows[row] = self._progress.add_task(row, total=total, completed=done)
                return
            # counted from the unit's start: a unit done within LINE_EVERY_S has its one line, `unit_done`'s
            if now - self._said.get(row, started) < LINE_EVERY_S:
                return
            self._said[row] = now
        what = "pages" if stage == "parse" else "pages with image quotes"
        # through `say`: no line follows the `interrupted:` line
        interrupt.say(f"{row}: {done} of {total} {what} ({now - started:.0f} s)")

    def ended(self, stage: str, name: str) -> None:
        """The unit's row leaves the display (its line in a log: `unit_done`'s)."""
        row = f"{stage} {name}"
        with self._lock:
            self._said.pop(row, None)
            task = self._rows.pop(row, None)
            if task is not None and self._progress is not None:
                self._progress.remove_task(task)

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def close(self) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.stop()
            self._progress = None


class Finished(Protocol):
    """What a finished unit of work reports (pipeline.stage_task.UnitResult)."""

    stage: str
    status: str
    rejects: int
    reason: str | None
    counts: dict[str, int]


F = TypeVar("F", bound=Finished)


class StageLines:
    """One line per unit of work finished, to stderr when stderr is not a terminal (where a
    terminal would show the bar): `parse report-2031.pdf: ok, 14 pages, 140 quotes (31.2 s)`."""

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
    """Report a unit of work finished (a line in a log; its row leaves a terminal's display); -> the
    result."""
    if _current is not None:
        _current.ended(result.stage, name)
    _lines.done(name, result, time.perf_counter() - started)
    return result


_current: PageProgress | None = None


def set_current(progress: PageProgress | None) -> None:
    global _current
    _current = progress


def advance(pages: int) -> None:
    if _current is not None:
        _current.advance(pages)


def pages_of(stage: str, name: str) -> Callable[[int, int], None]:
    """What a unit's page work tells as it goes, with (pages done, pages in all): its row, or its
    line every LINE_EVERY_S. Its time counts from here. (In a Ray worker no display is current:
    the command's process reports the unit when it ends.)"""
    started = time.perf_counter()

    def told(done: int, total: int) -> None:
        if _current is not None:
            _current.pages(stage, name, done, total, started)

    return told


def note(line: str) -> None:
    """A line the user must see whatever the output is (a damaged part found, ...): on stderr,
    above the bar when one is drawn."""
    bar = _current._progress if _current is not None else None
    if bar is not None:
        bar.console.print(line, markup=False, highlight=False)
    else:
        print(line, file=sys.stderr, flush=True)
