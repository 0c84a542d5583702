"""Limits (issue 18, item 4): files over `max_file_mb` or `max_pages` are rejected before any page
work, a document past `timeout_s` keeps the pages done and rejects the rest, a page that hangs
its worker, kills it or runs past the memory cap is a reject, and the batch goes on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from interleaf.parse.chunks import ChunkJob, run_jobs
from interleaf.parse.protocol import PageResult, ParsedPage
from interleaf.runtime.executor import PageLimits, page_map
from interleaf.stage import Lost
from tests.conftest import run_cli, sql_rows


def _text_pdf(path: Path, pages: int) -> Path:
    doc = pymupdf.open()
    for i in range(pages):
        doc.new_page().insert_text((72, 100), f"Page {i + 1} of a plain report about limits.", fontsize=14)
    doc.save(path)
    return path


def _form_bomb_page(doc: pymupdf.Document, levels: int) -> None:
    """A page that draws a form which draws the form below it twice, `levels` deep: a few hundred
    bytes that MuPDF reads as 2**levels fills, each time it reads the page (render, text). 2**18
    took 7 s to render here, in 50 MB: at 40 levels no machine ends it, and none runs out of memory."""
    page = doc.new_page()
    form = doc.get_new_xref()
    doc.update_object(form, "<< /Type /XObject /Subtype /Form /BBox [0 0 600 800] >>")
    doc.update_stream(form, b"0 0 0 rg 10 10 100 100 re f")
    for _ in range(levels):
        drawn, form = form, doc.get_new_xref()
        resources = f"/Resources << /XObject << /F {drawn} 0 R >> >>"
        doc.update_object(form, f"<< /Type /XObject /Subtype /Form /BBox [0 0 600 800] {resources} >>")
        doc.update_stream(form, b"/F Do /F Do")
    doc.xref_set_key(page.xref, "Resources", f"<< /XObject << /F {form} 0 R >> >>")
    contents = doc.get_new_xref()
    doc.update_object(contents, "<< >>")
    doc.update_stream(contents, b"/F Do")
    doc.xref_set_key(page.xref, "Contents", f"{contents} 0 R")


def _rejects(root: Path) -> list[dict]:
    return sql_rows(root, "select path, reason from rejects where stage = 'parse' order by reason")


def _names(root: Path) -> list[str]:
    return [r["name"] for r in sql_rows(root, "select name from documents order by name")]


def test_files_over_max_file_mb_or_max_pages_are_rejected_and_the_batch_goes_on(corpus: Path, tmp_path: Path) -> None:
    small = _text_pdf(tmp_path / "one-page.pdf", 1)
    big = corpus / "docs" / "layoutparser-table-page.pdf"  # 168 KB, 1 page
    long = _text_pdf(tmp_path / "three-pages.pdf", 3)
    root = tmp_path / "warehouse"
    limits = ("--set", "parse.limits.max_file_mb=0.15", "--set", "parse.limits.max_pages=2")
    run_cli(root, *limits, "ingest", str(small), str(big), str(long))
    assert _names(root) == ["one-page.pdf"]
    assert _rejects(root) == [
        {"path": str(big), "reason": "file too large: 0.2 MB, over parse.limits.max_file_mb=0.15"},
        {"path": str(long), "reason": "too many pages: 3, over parse.limits.max_pages=2"},
    ]


def _scanned_pdf(path: Path, pages: int, text_first: int) -> Path:
    """`text_first` pages of text (a hundredth of a second each), then pages with no text layer,
    each the picture of a page of 40 lines: OCR reads each for seconds (2.3 s here, on one core)."""
    text = pymupdf.open()
    page = text.new_page()
    for i in range(40):
        page.insert_text((50, 60 + 18 * i), f"Line {i + 1}: a plain report about limits, read by OCR.", fontsize=11)
    png = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
    doc = pymupdf.open()
    for i in range(text_first):
        doc.new_page().insert_text((72, 100), f"Page {i + 1} of a report about limits, in text.", fontsize=14)
    xref = 0
    for _ in range(pages - text_first):  # one image, drawn on every page
        xref = doc.new_page().insert_image(pymupdf.Rect(0, 0, 595, 842), stream=png if not xref else None, xref=xref)
    doc.save(path, deflate=True)
    return path


@pytest.mark.slow
def test_a_document_past_timeout_s_keeps_its_first_pages_and_rejects_the_rest(tmp_path: Path) -> None:
    # OCR'd pages, not pages of text: 400 pages of text once took longer than 25 s, and then a
    # faster machine parsed them all within it. 116 pages of OCR are ~135 s of work on 2 cores here.
    # The first pages are text: with an OCR'd page first, 3 test workers and the session's ingest
    # on 2 cores once left no page read within the 25 s (the page workers' start and models' load
    # count in them).
    n = 120
    pdf = _scanned_pdf(tmp_path / "long-report.pdf", n, text_first=4)
    root = tmp_path / "warehouse"
    limits = ("--set", "parse.limits.timeout_s=25", "--set", "parse.pages_per_chunk=1")
    run_cli(root, *limits, "--set", "describe.kinds=[]", "ingest", str(pdf))  # each page is a figure too
    [doc] = sql_rows(root, "select name, pages from documents")
    assert doc == {"name": "long-report.pdf", "pages": n}  # the file's page count; `pages` holds those kept
    kept = [r["page_idx"] for r in sql_rows(root, "select page_idx from pages order by page_idx")]
    print(f"{len(kept)} of {n} pages read within the 25 s")
    assert 0 < len(kept) < n and kept == list(range(len(kept)))
    assert _rejects(root) == [{"path": str(pdf), "reason": f"timeout after 25 s: pages {len(kept) + 1}–{n} not parsed"}]


def test_a_page_that_hangs_its_worker_is_a_reject_and_the_others_are_kept(tmp_path: Path) -> None:
    """Page 4 never ends, on any machine; the others take a second or two, the first of a worker
    with its models' load. A page's time counts from when it begins in a worker: timed from when it
    was handed to the pool, a slow machine lost pages 1-3 too (each in a new worker, after the pool
    was replaced for the one before: one CI run)."""
    doc = pymupdf.open()
    for i in range(3):
        doc.new_page().insert_text((72, 100), f"Page {i + 1}, read in a moment.", fontsize=14)
    _form_bomb_page(doc, 40)
    doc.new_page().insert_text((72, 100), "Page 5, after the slow one.", fontsize=14)
    pdf = tmp_path / "slow-page.pdf"
    doc.save(pdf, deflate=True)
    other = _text_pdf(tmp_path / "other.pdf", 2)
    root = tmp_path / "warehouse"
    limits = ("--set", "parse.limits.page_timeout_s=15", "--set", "parse.pages_per_chunk=1")
    run_cli(root, *limits, "ingest", str(pdf), str(other))
    assert _names(root) == ["other.pdf", "slow-page.pdf"]
    rows = sql_rows(root, "select d.name, p.page_idx from pages p join documents d using (doc_id) order by 1, 2")
    assert [(r["name"], r["page_idx"]) for r in rows] == [
        ("other.pdf", 0),
        ("other.pdf", 1),
        *(("slow-page.pdf", i) for i in (0, 1, 2, 4)),
    ]
    assert _rejects(root) == [
        {"path": str(pdf), "reason": "page 4: ran past 15 s a page; its worker was killed"},
    ]


# Page functions for the pool below: module-level, so the workers import them by name.


def _page(page: pymupdf.Page, _: object) -> PageResult:
    return PageResult(ParsedPage(page.number, page.rect.width, page.rect.height, 0, True, False), [])


def crash_on_page_3(page: pymupdf.Page, arg: object) -> PageResult:
    """A worker dying as a segfault or the OOM killer would end it: at once, with no exception."""
    if page.number == 2:
        os._exit(11)
    return _page(page, arg)


def slow_page_2_crash_on_page_3(page: pymupdf.Page, arg: object) -> PageResult:
    """Page 2 is still being read in one worker when page 3 kills the other."""
    if page.number == 1:
        time.sleep(4.0)  # long enough for the other worker to start and take page 3
    return crash_on_page_3(page, arg)


def allocate(megabytes: int) -> int:
    return int(np.ones(megabytes << 20, dtype=np.uint8).sum() >> 20)


@pytest.mark.usefixtures("fresh_pools")
def test_a_page_that_kills_its_worker_is_a_reject_and_the_other_pages_are_kept(tmp_path: Path) -> None:
    data = _text_pdf(tmp_path / "six.pdf", 6).read_bytes()
    jobs = [ChunkJob(data, "six.pdf", (0, 1, 2), (None,) * 3, crash_on_page_3)]
    jobs.append(ChunkJob(data, "six.pdf", (3, 4, 5), (None,) * 3, crash_on_page_3))
    done = run_jobs(jobs, page_map(2))
    assert [p.page_idx for p in done.pages] == [0, 1, 3, 4, 5]
    assert len(done.page_rejects) == 1 and done.page_rejects[0][0] == 2
    assert done.page_rejects[0][1].startswith("its worker process died")


@pytest.mark.usefixtures("fresh_pools")
def test_a_page_beside_the_one_that_kills_the_workers_is_kept(tmp_path: Path) -> None:
    """Each time page 3 kills its worker, the pool goes and takes page 2, read in the other
    worker, with it: page 2 is tried again on its own, not beside page 3 a second time."""
    data = _text_pdf(tmp_path / "three.pdf", 3).read_bytes()
    done = run_jobs([ChunkJob(data, "three.pdf", (0, 1, 2), (None,) * 3, slow_page_2_crash_on_page_3)], page_map(2))
    assert [p.page_idx for p in done.pages] == [0, 1]
    assert [page for page, _ in done.page_rejects] == [2]


@pytest.mark.usefixtures("fresh_pools")
def test_the_memory_cap_holds_in_the_page_workers() -> None:
    results = list(page_map(2, limits=PageLimits(worker_mb=2048))(allocate, [100, 3000, 100]))
    assert results[0] == 100 and results[2] == 100
    assert isinstance(results[1], Lost) and results[1].kind == "memory"
