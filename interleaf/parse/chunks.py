"""The one way a parser spreads its page work: pages in runs of `pages_per_chunk`, one job per run
through the `PageMap` it was given (a process pool's map in the ingest), each job opening the PDF
once and parsing its pages with the backend's page function."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pymupdf

from interleaf.parse.protocol import PageMap, PageResult, ParsedPage, ParsedQuote
from interleaf.pdf.document import open_pdf

# A backend's work on one page: the page and what it needs besides (its config, MinerU's blocks).
# It must be a module-level function: jobs are pickled to worker processes.
PageFunction = Callable[[pymupdf.Page, Any], PageResult]


@dataclass(frozen=True)
class ChunkJob:
    pdf: bytes
    name: str
    pages: tuple[int, ...]
    page_args: tuple[Any, ...]  # one per page in `pages`
    parse_page: PageFunction


def page_chunks(page_count: int, size: int) -> list[tuple[int, ...]]:
    """Page indices in runs of `size`: one page-map job each, so a worker opens the PDF once per run."""
    return [tuple(range(start, min(start + size, page_count))) for start in range(0, page_count, size)]


def run_chunk(job: ChunkJob) -> list[PageResult]:
    """Module-level so a process pool can run it."""
    doc = open_pdf(job.pdf, job.name)
    try:
        return [job.parse_page(doc[i], arg) for i, arg in zip(job.pages, job.page_args, strict=True)]
    finally:
        doc.close()


def gather_pages(chunks: Iterable[list[PageResult]]) -> tuple[list[ParsedPage], list[ParsedQuote]]:
    """Flatten the per-chunk results of a page map, in order, into pages and quotes."""
    pages: list[ParsedPage] = []
    quotes: list[ParsedQuote] = []
    for results in chunks:
        for result in results:
            pages.append(result.page)
            quotes.extend(result.quotes)
    return pages, quotes


def parse_pages(
    pdf: bytes,
    name: str,
    page_count: int,
    pages_per_chunk: int,
    page_map: PageMap,
    parse_page: PageFunction,
    page_arg: Callable[[int], Any],
) -> tuple[list[ParsedPage], list[ParsedQuote]]:
    """Every page of the document through `parse_page(page, page_arg(page_idx))`, in page order."""
    jobs = [
        ChunkJob(pdf, name, pages, tuple(page_arg(i) for i in pages), parse_page)
        for pages in page_chunks(page_count, pages_per_chunk)
    ]
    return gather_pages(page_map(run_chunk, jobs))
