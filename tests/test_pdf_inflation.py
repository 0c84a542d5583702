"""interleaf/pdf/inflation.py: a page whose content inflates past the limit is not read; it is told
apart from ordinary pages by counting, not by a timeout."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

from benchmarks.faults.fuzz_specials import flate_bomb, raw_pdf, stream
from interleaf.parse.chunks import ChunkJob, run_chunk
from interleaf.parse.protocol import PageRejected
from interleaf.pdf.inflation import MAX_CONTENT_MB, content_past_limit


def test_a_flate_bomb_is_counted_to_the_limit_and_no_further() -> None:
    doc = pymupdf.open(stream=flate_bomb(gib=1), filetype="pdf")  # 40 KB inflating to 1 GiB, twice Flate
    started = time.monotonic()
    reason = content_past_limit(doc[0])
    assert reason is not None and f"past {MAX_CONTENT_MB} MB" in reason
    assert time.monotonic() - started < 10, "counting stops at the limit, not at the stream's end"
    assert content_past_limit(doc[0], limit_mb=1100) is None  # 1 GiB = 1024 MB is under 1,100


def _page_of(content: bytes, filters: bytes) -> pymupdf.Document:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        stream(content, filters),
    ]
    return pymupdf.open(stream=raw_pdf(objects), filetype="pdf")


@pytest.mark.parametrize(
    ("encode", "filters"),
    [
        (lambda data: data, b""),
        (zlib.compress, b"/Filter /FlateDecode "),
        (lambda data: zlib.compress(zlib.compress(data)), b"/Filter [/FlateDecode /Fl] "),
    ],
)
def test_the_inflated_size_is_what_is_counted(encode: Callable[[bytes], bytes], filters: bytes) -> None:
    content = b"0 0 m 10 10 l S\n" * 70_000  # 1.07 MiB of drawing
    doc = _page_of(encode(content), filters)
    assert content_past_limit(doc[0], limit_mb=1.0) is not None
    assert content_past_limit(doc[0], limit_mb=1.2) is None


def test_other_filters_and_broken_flate_are_left_to_mupdf() -> None:
    content = b"0 0 m 10 10 l S\n" * 70_000
    hex_doc = _page_of(content.hex().encode(), b"/Filter /ASCIIHexDecode ")
    assert content_past_limit(hex_doc[0], limit_mb=1.0) is None
    broken_doc = _page_of(b"not flate at all", b"/Filter /FlateDecode ")
    assert content_past_limit(broken_doc[0], limit_mb=0.000001) is None


def test_the_corpus_pages_are_read_and_a_bomb_page_is_a_reject(corpus: Path) -> None:
    for pdf in sorted((corpus / "docs").glob("*.pdf")):
        doc = pymupdf.open(pdf)
        assert [content_past_limit(page) for page in doc] == [None] * doc.page_count, pdf.name
    bomb = flate_bomb(gib=1)
    [result] = run_chunk(ChunkJob(bomb, "bomb.pdf", (0,), (None,), _never_called))
    assert isinstance(result, PageRejected) and "decompression bomb" in result.reason


def _never_called(page: pymupdf.Page, _: object) -> object:
    raise AssertionError("the page function ran on a page that is not read")
