"""Where an ingest's page work runs, and how it tells its progress. Apart from the flow
(flows/ingest.py), which imports Prefect, the slowest of the command's imports: the command reads
its files' facts and says what it does before that import."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from interleaf.config import PAGES, Settings
from interleaf.parse.facts import DocumentFacts
from interleaf.parse.stage import SourceFile
from interleaf.runtime import progress, ray_engine
from interleaf.runtime.executor import PageLimits, page_map
from interleaf.stage import PageMap


def page_work_map(settings: Settings, whole_document: bool) -> PageMap:
    """Where a stage's runs of pages go (a stage whose `page_work` says so): this machine's page
    processes, or the Ray cluster. `whole_document`: the stage made from the file (parse) holds the
    document's time limit (`parse.limits.timeout_s`); every use holds the per-page time and the
    workers' memory cap, the reads of whole files before the flow too (flows/runner.py)."""
    limits = settings.parse.limits
    timeout_s = limits.timeout_s if whole_document else None
    page_limits = PageLimits(
        limits.page_timeout_s, timeout_s, time.monotonic(), limits.max_worker_mb, settings.parse.memory_budget_mb
    )
    if settings.executor.kind == "ray":
        return ray_engine.ray_page_map(settings.executor.for_stage(PAGES), None, page_limits)
    return page_map(settings.parse.workers, None, page_limits)


def unit_progress(
    stage: str, path: str, source: object, pages: PageMap
) -> tuple[PageMap, Callable[[int], None] | None]:
    """A unit of page work's progress (interleaf/runtime/progress.py), told from where its pages are done:
    parse's checkpoint as it saves each run of pages (what a stop keeps, and a rerun skips), and
    describe's runs of readings as they end (their worker cached each reading). -> the page map to
    run the unit with, and what its checkpoint tells of the rows it holds."""
    told = progress.pages_of(stage, Path(path).name)
    if isinstance(source, SourceFile):  # the stage made from the file: its checkpoint holds its pages
        facts = source.facts if isinstance(source, SourceFile) else None
        total = facts.page_count if isinstance(facts, DocumentFacts) else 0
        return pages, lambda saved: told(saved, total)
    return pages_counted(pages, told), None


def pages_counted(inner: PageMap, told: Callable[[int, int], None]) -> PageMap:
    """`inner`, telling (pages done, pages in all) of the items with `pages` (describe's runs of
    readings) as each ends. An item run again in parts (a fault isolated) adds no pages. Read by
    name: the command's process does not import the describe stage's page code (PyMuPDF)."""
    seen: set[int] = set()
    done: set[int] = set()

    def mapped(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        items = list(items)
        seen.update(p for item in items for p in getattr(item, "pages", ()))
        told(len(done), len(seen))
        for item, result in zip(items, inner(fn, items), strict=True):
            done.update(getattr(item, "pages", ()))
            told(len(done), len(seen))
            yield result

    return mapped
