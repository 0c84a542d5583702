"""Each document's stages as a chain, with no barrier between documents.

A document's next stage is submitted the moment its own previous one ends, and a new document is
begun the moment one ends; so a 619-page manual holds back nobody else, and describe of one
document runs while another is parsed. `in_flight` documents at most are begun and not ended:
their units are all that is ever queued, so a successor never waits behind other documents'
parses (submitting every parse up front would put it there, which is a barrier again).

A level is a group of stages a document runs side by side (the index stages, one per retriever);
the next level starts once every stage of this one ended ok. A held level is the exception, the one
barrier there is: a document that reaches it waits, outside the `in_flight` count, until every
document is past the levels before it (under a memory budget the index waits for the page workers
to be gone: flows/ingest.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from prefect.futures import PrefectFuture, as_completed


def run_chains(
    documents: Sequence[str],
    levels: Sequence[Sequence[str]],
    submit: Callable[[str, str], PrefectFuture[Any]],
    ended: Callable[[str, PrefectFuture[Any]], bool],
    in_flight: int,
    halted: Callable[[], bool] = lambda: False,
    on_level_over: Callable[[int], None] = lambda level: None,
    held_level: int | None = None,
) -> None:
    """`submit(stage, document)` starts a unit; `ended(document, future)` takes its outcome and says
    whether the document goes on. Once `halted()` (a stop, a full disk), nothing new is begun: the
    units running end, and the call returns. `on_level_over(level)` is called once for each level,
    in order, once no document is left to run it or one before it (describe is over: the page
    workers can go). A document reaching `held_level` begins it only once `on_level_over` was
    called for every level before it."""
    waiting = deque((document, 0) for document in documents)  # (document, the level it begins at)
    parked: list[str] = []  # documents that reached the held level before the levels under it were over
    running: dict[PrefectFuture[Any], tuple[str, int]] = {}
    units_left: dict[str, int] = {}  # a document begun -> units of its current level not ended
    level_of: dict[str, int] = {}
    going_on: dict[str, bool] = {}
    levels_over = 0

    def begin(document: str, level: int) -> None:
        level_of[document] = level
        units_left[document] = len(levels[level])
        going_on[document] = True
        for stage in levels[level]:
            running[submit(stage, document)] = (document, level)

    def fill() -> None:
        while waiting and len(units_left) < in_flight and not halted():
            begin(*waiting.popleft())

    def next_level(document: str, level: int) -> None:
        if level == held_level and levels_over < level:
            del level_of[document]
            parked.append(document)
        else:
            begin(document, level)

    def check_levels() -> None:
        nonlocal levels_over
        to_begin = [level for _, level in waiting] + [held_level or 0] * len(parked) if not halted() else []
        lowest = min([*to_begin, *level_of.values()], default=len(levels))
        while levels_over < lowest:
            on_level_over(levels_over)
            levels_over += 1
        if parked and held_level is not None and levels_over >= held_level and not halted():
            waiting.extendleft((document, held_level) for document in reversed(parked))
            parked.clear()
            fill()

    fill()
    while running:
        future = next(as_completed(list(running)))
        document, level = running.pop(future)
        going_on[document] = ended(document, future) and going_on[document]
        units_left[document] -= 1
        if units_left[document]:
            continue
        del units_left[document]
        if going_on[document] and level + 1 < len(levels) and not halted():
            next_level(document, level + 1)
        else:
            del level_of[document]
        fill()
        check_levels()
    check_levels()
