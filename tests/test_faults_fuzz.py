"""`make faults`, fuzzed PDFs at CI size: the four hostile specials and a few seeded mutations of
corpus extracts, ingested in one batch with two control documents. Every file ends as quotes or
a reject with its reason within the bound, the batch goes on, the controls lose no row, and each
special ends the way its damage says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.faults import fuzz_pdfs
from benchmarks.faults.common import FaultContext
from benchmarks.faults.fuzz_specials import SPECIALS
from interleaf.pdf.inflation import MAX_CONTENT_MB
from tests.conftest import sql_rows

# What each special's reject must begin with: the bomb's page is not read (its 40 KB inflate to
# 16 GiB), the nesting overflows MuPDF's stack, the loop is a cycle, the pages are too many.
SPECIAL_REASONS = {
    "bomb": rf"page 1: its content inflates past {MAX_CONTENT_MB} MB \(a decompression bomb\?\): not read",
    "deep-nesting": r"page 1: damaged page, nothing could be read: .*stack overflow",
    "page-tree-loop": r"page [23]: damaged page, cannot be parsed: cycle in page tree",
    "10000-pages": r"too many pages: 10000, over parse\.limits\.max_pages=2000",
}


@pytest.mark.slow
def test_fuzzed_pdfs_end_as_quotes_or_rejects_with_reasons_and_the_batch_goes_on(corpus: Path, tmp_path: Path) -> None:
    outcome = fuzz_pdfs.run(FaultContext(corpus, tmp_path, "ci"))
    print(f"{outcome.fault}: {outcome.cases} cases, {outcome.survived} survived, {outcome.rows_lost} rows lost")
    print(outcome.detail)
    assert outcome.ok, "\n".join(outcome.failures)
    assert outcome.cases == len(SPECIALS) + fuzz_pdfs.RANDOM_CASES["ci"]

    rejects = sql_rows(tmp_path / "warehouse", "select path, reason from rejects")
    for special, pattern in SPECIAL_REASONS.items():
        name = f"special-{special}.pdf"
        reasons = [r["reason"] for r in rejects if Path(r["path"]).name == name]
        assert any(re.match(pattern, reason) for reason in reasons), f"{name}: {reasons}"
    # the loop's first page is readable and kept; the bomb, the nesting and the 10,000 pages give nothing
    quoted = {
        r["name"]
        for r in sql_rows(tmp_path / "warehouse", "select distinct d.name from quotes join documents d using (doc_id)")
    }
    assert "special-page-tree-loop.pdf" in quoted
    assert not quoted & {"special-bomb.pdf", "special-deep-nesting.pdf", "special-10000-pages.pdf"}
