"""Pages MuPDF cannot read, found by the fuzz fault (benchmarks/faults/fuzz_pdfs.py): each is a
page reject with MuPDF's reason, in a page worker as inline, and the document's other pages are
kept. Before, a MuPDF exception in a worker could not be pickled back and failed the whole run,
and a page MuPDF skipped was stored as a blank page with no word of why."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import pymupdf
import pytest

from benchmarks.faults.fuzz_specials import deep_nesting, page_tree_loop
from interleaf.config import load_settings
from interleaf.errors import DocumentError
from interleaf.parse.chunks import ChunkJob, run_jobs
from interleaf.parse.protocol import PageResult, ParsedPage, ParsedQuote
from interleaf.parse.stage import ParseStage, SourceFile
from interleaf.runtime.executor import PageLimits, page_map, shutdown_pools
from pipeline.context import RunContext, new_run_id
from pipeline.stage_task import Plan, run_unit
from warehouse import Warehouse


def text_quotes(page: pymupdf.Page, _: object) -> PageResult:
    """A page function as small as a parser's: a quote for each block of the text layer (none
    from a page MuPDF skipped)."""
    quotes = [
        ParsedQuote(page.number, "text", tuple(b[:4]), b[4], "text_layer") for b in page.get_text("blocks") if b[4]
    ]
    return PageResult(ParsedPage(page.number, page.rect.width, page.rect.height, 0, True, False), quotes)


@pytest.fixture
def fresh_pools() -> None:
    shutdown_pools()
    yield
    shutdown_pools()


def _jobs(data: bytes, name: str) -> list[ChunkJob]:
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        pages = tuple(range(doc.page_count))
    return [ChunkJob(data, name, pages, (None,) * len(pages), text_quotes)]


@pytest.mark.usefixtures("fresh_pools")
def test_a_page_tree_loop_in_a_page_worker_rejects_its_pages_and_keeps_the_first() -> None:
    # the tree lists 3 pages; loading the 2nd and 3rd walks into the loop (MuPDF's FzErrorFormat)
    done = run_jobs(_jobs(page_tree_loop(), "loop.pdf"), page_map(2, limits=PageLimits(item_timeout_s=60)))
    assert [p.page_idx for p in done.pages] == [0]
    assert done.page_rejects == [
        (1, "damaged page, cannot be parsed: cycle in page tree"),
        (2, "damaged page, cannot be parsed: cycle in page tree"),
    ]


def test_a_page_mupdf_could_not_load_is_a_reject_naming_its_errors_not_a_blank_page() -> None:
    done = run_jobs(_jobs(deep_nesting(), "deep.pdf"), map)
    assert done.pages == []
    [(page, reason)] = done.page_rejects
    assert page == 0 and reason.startswith("damaged page, nothing could be read: ")
    assert "stack overflow" in reason and "cannot load object (3 0 R)" in reason


def test_a_blank_page_that_mupdf_read_without_error_stays_a_page(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page()
    done = run_jobs(_jobs(doc.tobytes(), "blank.pdf"), map)
    assert [p.page_idx for p in done.pages] == [0] and done.page_rejects == []


def test_a_document_error_raised_in_a_worker_pickles_back_whole() -> None:
    error = pickle.loads(pickle.dumps(DocumentError("a.pdf", "damaged PDF, cannot be opened: x", "ab12")))
    assert (error.path, error.reason, error.doc_id, str(error)) == (
        "a.pdf",
        "damaged PDF, cannot be opened: x",
        "ab12",
        "a.pdf: damaged PDF, cannot be opened: x",
    )


def test_a_document_with_nothing_on_any_page_is_a_reject_not_an_empty_document(tmp_path: Path) -> None:
    """The full-size fuzz fault found a byte-flipped page that MuPDF repaired into a blank one: the
    document was stored with no quote and no word of why. Blank pages everywhere are now a reject."""
    pdf = pymupdf.open()
    for _ in range(2):
        pdf.new_page()
    path = tmp_path / "blank.pdf"
    pdf.save(path)
    settings = load_settings()
    plan = Plan.of([ParseStage(settings.parse)])
    doc_id = hashlib.sha256(path.read_bytes()).hexdigest()
    ctx = RunContext(new_run_id(), "ingest", str(tmp_path / "wh"), settings)
    result = run_unit(ctx, plan, "parse", doc_id, source=SourceFile(str(path), doc_id), path=str(path))
    assert result.status == "rejected"
    assert result.reason == "nothing found: no text, figure or table on any of its 2 pages"
    rejects = Warehouse(tmp_path / "wh").read_table("rejects", plan.fingerprints["parse"]).to_pylist()
    assert [(r["path"], r["reason"]) for r in rejects] == [(str(path), result.reason)]
