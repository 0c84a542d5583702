"""The one way a parser spreads its page work: pages in runs of `pages_per_chunk`, one job per run
through the `PageMap` it was given (a process pool's map in the ingest), each job opening the PDF
once and parsing its pages with the backend's page function."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from interleaf.parse.protocol import PageRejected, PageResult, ParsedPage, ParsedQuote
from interleaf.pdf.document import empty_pdf_store, mupdf_errors, mupdf_exceptions, open_pdf
from interleaf.pdf.inflation import content_past_limit
from interleaf.pdf.mupdf import pymupdf
from interleaf.runtime.heap import return_freed_memory
from interleaf.stage import Lost, PageMap, map_isolating_faults

# A backend's work on one page: the page and what it needs besides (its config, MinerU's blocks).
# It must be a module-level function: jobs are pickled to worker processes.
PageFunction = Callable[["pymupdf.Page", Any], PageResult]


@dataclass(frozen=True)
class ChunkJob:
    pdf: bytes
    name: str
    pages: tuple[int, ...]
    page_args: tuple[Any, ...]  # one per page in `pages`
    parse_page: PageFunction

    def __len__(self) -> int:
        """Its pages: a page map gives a job that many pages' time (`parse.limits.page_timeout_s`)."""
        return len(self.pages)


def page_chunks(page_count: int, size: int) -> list[tuple[int, ...]]:
    """Page indices in runs of `size`: one page-map job each, so a worker opens the PDF once per run."""
    return [tuple(range(start, min(start + size, page_count))) for start in range(0, page_count, size)]


def run_chunk(job: ChunkJob) -> list[PageResult | PageRejected]:
    """Module-level so a process pool can run it."""
    doc = open_pdf(job.pdf, job.name)
    try:
        return [_run_page(doc, i, arg, job.parse_page) for i, arg in zip(job.pages, job.page_args, strict=True)]
    finally:
        doc.close()
        empty_pdf_store()
        return_freed_memory()  # what layout and rendering freed (an OCR read hands its own back)


_CODE = re.compile(r"^code=\d+: ")  # MuPDF's error number, before its message


def _run_page(doc: pymupdf.Document, page_idx: int, arg: Any, parse_page: PageFunction) -> PageResult | PageRejected:
    """One page, or why it is rejected: MuPDF could not read it (its exception is turned into a
    reason here, in the worker: MuPDF's exceptions cannot be pickled back to the parent, and one
    would fail the whole document), its content inflates past the limit (interleaf/pdf/inflation.py),
    or it gave nothing and MuPDF reported errors on the way (a damaged page read as empty would
    otherwise be stored as a blank page, silently)."""
    mupdf_errors()  # forget what earlier pages reported
    try:
        page = doc[page_idx]
        if (bomb := content_past_limit(page)) is not None:
            return PageRejected(page_idx, bomb)
        result = parse_page(page, arg)
    except mupdf_exceptions() as exc:
        return PageRejected(page_idx, f"damaged page, cannot be parsed: {_CODE.sub('', str(exc))}")
    if not result.quotes and (errors := mupdf_errors()):
        return PageRejected(page_idx, f"damaged page, nothing could be read: {errors}")
    return result


@dataclass
class ParsedPages:
    """The pages a parser's page work ended with, in page order, and those it did not."""

    pages: list[ParsedPage] = field(default_factory=list)
    quotes: list[ParsedQuote] = field(default_factory=list)
    page_rejects: list[tuple[int, str]] = field(default_factory=list)  # (page_idx, reason)
    range_rejects: list[str] = field(default_factory=list)  # reasons naming a run of pages

    def add(self, results: list[PageResult | PageRejected]) -> None:
        for result in results:
            if isinstance(result, PageRejected):
                self.page_rejects.append((result.page_idx, result.reason))
                continue
            self.pages.append(result.page)
            self.quotes.extend(result.quotes)

    def in_order(self) -> ParsedPages:
        """Pages retried one at a time come back after the others; a stable sort keeps each page's
        quotes in their reading order."""
        self.pages.sort(key=lambda p: p.page_idx)
        self.quotes.sort(key=lambda q: q.page_idx)
        self.page_rejects.sort()
        return self


def page_ranges(pages: list[int]) -> list[tuple[int, int]]:
    """Sorted page indices as runs of consecutive ones: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for page in sorted(pages):
        if runs and runs[-1][1] == page - 1:
            runs[-1] = (runs[-1][0], page)
        else:
            runs.append((page, page))
    return runs


def _not_parsed(reason: str, pages: list[int]) -> list[str]:
    """One reason per run of pages, 1-based: "timeout after 5 s: pages 9–40 not parsed"."""
    return [
        f"{reason}: page {a + 1} not parsed" if a == b else f"{reason}: pages {a + 1}–{b + 1} not parsed"
        for a, b in page_ranges(pages)
    ]


def _single_pages(job: ChunkJob) -> list[ChunkJob]:
    return [
        ChunkJob(job.pdf, job.name, (page,), (arg,), job.parse_page)
        for page, arg in zip(job.pages, job.page_args, strict=True)
    ]


def run_jobs(jobs: list[ChunkJob], page_map: PageMap) -> ParsedPages:
    """Every job through `page_map`. A chunk that was lost is run again one page at a time, which
    finds the page at fault: it is rejected, the other pages are kept (`map_isolating_faults` says
    how). Pages the document's time ran out on are rejected as runs of pages."""
    out = ParsedPages()
    timed_out: dict[str, list[int]] = {}
    for job, result in map_isolating_faults(run_chunk, jobs, page_map, _single_pages):
        if not isinstance(result, Lost):
            out.add(result)
        elif result.kind == "timeout":
            timed_out.setdefault(result.reason, []).extend(job.pages)
        else:
            out.page_rejects.append((job.pages[0], result.reason))
    for reason, pages in timed_out.items():
        out.range_rejects += _not_parsed(reason, pages)
    return out.in_order()


def parse_pages(
    pdf: bytes,
    name: str,
    page_count: int,
    pages_per_chunk: int,
    page_map: PageMap,
    parse_page: PageFunction,
    page_arg: Callable[[int], Any],
) -> ParsedPages:
    """Every page of the document through `parse_page(page, page_arg(page_idx))`, in page order."""
    jobs = [
        ChunkJob(pdf, name, pages, tuple(page_arg(i) for i in pages), parse_page)
        for pages in page_chunks(page_count, pages_per_chunk)
    ]
    return run_jobs(jobs, page_map)
