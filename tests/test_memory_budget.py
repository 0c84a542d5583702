"""parse.memory_budget_mb: the page workers' OCR detections take turns when the command's processes
are near the budget, and run side by side when they are not (interleaf/runtime/memory_budget.py)."""

from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pyarrow.compute as pc
import pymupdf
import pytest

from interleaf.config import load_settings
from interleaf.errors import ConfigError
from interleaf.pdf.ocr.config import RapidOcrConfig
from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine
from interleaf.pdf.render import render_bgr
from interleaf.runtime import memory_budget
from interleaf.runtime.executor import PageLimits, page_map
from interleaf.runtime.memory_budget import MemoryBudget, tree_pss_mb
from tests.conftest import IngestedWarehouse, run_cli, sql_rows, view_tables

HOLD_S = 0.5


def hold_room(side: int) -> tuple[int, float, float]:
    """Module-level, for the workers: waits for room for a detection on a `side` x `side` input,
    holds it HOLD_S, and says which process held it when."""
    with memory_budget.room_for_detection((1, 3, side, side)):
        start = time.monotonic()  # CLOCK_MONOTONIC: one clock for all processes of the machine
        time.sleep(HOLD_S)
        return os.getpid(), start, time.monotonic()


def _overlapping(spans: list[tuple[int, float, float]]) -> int:
    ordered = sorted(spans, key=lambda span: span[1])
    return sum(later[1] < earlier[2] for earlier, later in itertools.pairwise(ordered))


@pytest.mark.usefixtures("fresh_pools")
def test_detections_take_turns_when_two_would_not_fit() -> None:
    # a 3000 px square: an estimate of ~2 GB, so one fits in no budget below 4 GB beside another
    spans = list(page_map(2, limits=PageLimits(budget_mb=3000))(hold_room, [3000] * 4))
    assert len({pid for pid, _, _ in spans}) == 2, "both workers asked for room"
    assert _overlapping(spans) == 0, spans
    # what the budget is held against: this process and its page workers, not this process alone
    assert tree_pss_mb(os.getpid()) > _own_pss_mb() + 50


def _own_pss_mb() -> float:
    rollup = Path("/proc/self/smaps_rollup").read_text().splitlines()
    return next(int(line.split()[1]) for line in rollup if line.startswith("Pss:")) / 1024


@pytest.mark.usefixtures("fresh_pools")
def test_detections_run_side_by_side_in_a_budget_with_room() -> None:
    spans = list(page_map(2, limits=PageLimits(budget_mb=1_000_000))(hold_room, [3000] * 4))
    assert _overlapping(spans) >= 1, spans


def hold_turn(job: tuple[str, float]) -> tuple[str, int, float, float]:
    """Module-level, for the workers: after `delay` s, a detection on a 3000 px square (~2 GB, past a
    small budget even alone) or another model step, held HOLD_S."""
    kind, delay = job
    time.sleep(delay)
    turn = memory_budget.room_for_detection((1, 3, 3000, 3000)) if kind == "detection" else memory_budget.model_step()
    with turn:
        start = time.monotonic()
        time.sleep(HOLD_S)
        return kind, os.getpid(), start, time.monotonic()


@pytest.mark.usefixtures("fresh_pools")
@pytest.mark.parametrize(("budget_mb", "alone"), [(100, True), (1_000_000, False)])
def test_a_detection_past_the_budget_runs_alone(budget_mb: int, alone: bool) -> None:
    """It waits for the other worker's step in progress, and that worker's next steps wait for it;
    in a budget with room, steps and detections run side by side."""
    jobs = [("step", 0.0), ("detection", 0.2), ("step", 0.3), ("step", 0.0), ("detection", 0.0)]
    spans = list(page_map(2, limits=PageLimits(budget_mb=budget_mb))(hold_turn, jobs))
    assert len({pid for _, pid, _, _ in spans}) == 2, "both workers took jobs"
    detections = [span for span in spans if span[0] == "detection"]
    beside = [
        (one, other)
        for one in detections
        for other in spans
        if other is not one and other[2] < one[3] and one[2] < other[3]
    ]
    assert (not beside) is alone, spans


def test_rapidocr_detection_waits_for_the_room_another_holds(corpus: Path) -> None:
    """The detector of the engine parse and describe use goes through the budget: while another
    detection holds room in a full budget, a read waits for it, then reads what it reads unbudgeted."""
    image = render_bgr(pymupdf.open(corpus / "docs" / "scanned-table.pdf")[0], 100)
    engine = RapidOcrEngine(RapidOcrConfig(threads=1, det_max_side=736))
    unbudgeted = engine.read(image)
    # a budget this process is past on its own: the other detection runs alone, and the read waits
    # whatever the process's PSS (which falls as more processes share its pages: a budget near it
    # was full in one run and not in another)
    budget = MemoryBudget(1, os.getpid(), multiprocessing.get_context("forkserver"))
    held, hold_s = threading.Event(), 2.0
    releasing: list[float] = []

    def other_detection() -> None:
        with budget.room_for(1.0):
            held.set()
            time.sleep(hold_s)
            releasing.append(time.monotonic())  # the room is handed back right after this

    other = threading.Thread(target=other_detection)
    memory_budget.install(budget)
    try:
        other.start()
        held.wait(10)
        budgeted = engine.read(image)
        done = time.monotonic()
    finally:
        memory_budget.install(None)
        other.join()
    # a read that waited for the room ends after it was handed back; timed from the release, not from
    # when this thread woke (on a loaded machine it may wake late and seem to have waited less)
    assert done >= releasing[0], f"the read ended {releasing[0] - done:.2f} s before the room held was handed back"
    assert [line.text for line in budgeted] == [line.text for line in unbudgeted]
    assert len(unbudgeted) > 5


_kept: list[int] = []  # the blocks between the freed ones, never freed (a worker's, for its life)


def _freed_but_held_by_malloc(mb: int) -> None:
    """`mb` MB allocated through malloc, written, and freed between blocks still in use: malloc
    keeps the freed blocks for the process's next allocations (none can merge into the heap's top)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    freed = []
    for _ in range(mb * 32):
        freed.append(libc.malloc(32 * 1024))
        ctypes.memset(freed[-1], 1, 32 * 1024)
        _kept.append(libc.malloc(2048))  # past the per-thread cache's sizes: taken from the heap's top
    for block in freed:
        libc.free(block)


def detection_or_step_after_freeing(job: tuple[str, Path]) -> tuple[str, float, float, float]:
    """Module-level, for the workers: a detection past a small budget even alone, held 1.5 s (it
    creates `running` once it has room); or, once that file exists, 200 MB freed but kept by
    malloc, then a model step, which must wait for the detection. Returns the kind, the PSS
    before the step and in it (MB), and how long the step waited."""
    kind, running = job
    if kind == "detection":
        with memory_budget.room_for_detection((1, 3, 3000, 3000)):
            running.touch()
            time.sleep(1.5)
        return kind, 0.0, 0.0, 0.0
    deadline = time.monotonic() + 60  # the other worker may start seconds later on a busy machine
    while not running.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _freed_but_held_by_malloc(200)
    before = _own_pss_mb()
    started = time.monotonic()
    with memory_budget.model_step():
        return kind, before, _own_pss_mb(), time.monotonic() - started


@pytest.mark.usefixtures("fresh_pools")
def test_a_worker_that_waits_for_room_first_hands_back_what_malloc_kept(tmp_path: Path) -> None:
    """What a page worker waiting behind a detection that runs alone holds is part of what the
    detection runs beside: what malloc kept of its heap is handed back before the wait."""
    running = tmp_path / "detection-running"
    jobs = [("step", running), ("detection", running)]  # the step's worker waits, so the other takes the detection
    ends = list(page_map(2, limits=PageLimits(budget_mb=100))(detection_or_step_after_freeing, jobs))
    _, before, during, waited = ends[0]
    assert waited > 0.5, f"the step waited {waited:.2f} s: it did not wait for the detection"
    assert before - during > 150, f"{before:.0f} MB before the wait, {during:.0f} MB in the step"


@pytest.mark.parametrize(
    ("overrides", "refusal"),
    [
        (["executor.kind=ray"], "executor kind 'local' only"),
        (["describe.ocr.backend=paddleocr"], "describe.ocr.backend is 'paddleocr'"),
    ],
)
def test_a_budget_where_it_would_not_hold_is_refused(overrides: list[str], refusal: str) -> None:
    with pytest.raises(ConfigError, match=refusal):
        load_settings(overrides=["parse.memory_budget_mb=1536", *overrides])
    load_settings(overrides=["parse.memory_budget_mb=1536"])


BUDGETED_DOCS = ("dpr-emnlp2020.pdf", "figures-example.pdf", "corrosion-plot-table.pdf", "scanned-table.pdf")


def test_under_a_budget_the_index_waits_for_the_page_work_and_stores_the_same_quotes(
    tmp_path: Path, corpus: Path, corpus_warehouse: IngestedWarehouse
) -> None:
    """pipeline/chains.py's held level: under a budget no document is indexed while any is still parsed
    or described (the page workers are let go first). Without it the three short documents, begun
    beside the 13-page paper, would be indexed while the paper is still read."""
    root = tmp_path / "warehouse"
    paths = [str(corpus / "docs" / name) for name in BUDGETED_DOCS]
    result = run_cli(root, "--set", "parse.memory_budget_mb=1536", "ingest", *paths)
    run_id = result.stdout.split()[1].rstrip(":")
    this_run = f"from runs where run_id = '{run_id}'"
    described = f"(select max(ended_at) {this_run} and stage = 'describe')"
    indexed = f"(select min(started_at) {this_run} and stage like 'index:%')"
    (row,) = sql_rows(
        root,
        f"select {described} as described, {indexed} as indexed, {indexed} >= {described} as after, "
        f"(select count(*) {this_run} and stage like 'index:%' and status = 'ok') as ok",
    )
    assert row["ok"] == 2 * len(BUDGETED_DOCS), row  # bm25 and minilm, each document
    assert row["after"] is True, row
    # what is stored does not depend on the budget: the same quotes as docs/ ingested without one
    (budgeted,) = view_tables(root, "quotes")
    (unbudgeted,) = view_tables(corpus_warehouse.root, "quotes")
    unbudgeted = unbudgeted.filter(pc.is_in(unbudgeted["doc_id"], budgeted["doc_id"].unique()))
    assert unbudgeted.num_rows > 20
    columns = ["quote_id", "kind", "text", "page_idx"]
    assert sorted(budgeted.select(columns).to_pylist(), key=str) == sorted(
        unbudgeted.select(columns).to_pylist(), key=str
    )
