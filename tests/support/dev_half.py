"""MMLongBench-Doc's dev half beside the repository (../shared/benchmarks/mmlongbench-dev), for the
tests that read its PDFs: a test is skipped, naming the path, where the file is not there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pymupdf
import pytest

from tests.conftest import CORPUS

BENCH = CORPUS.parent / "benchmarks" / "mmlongbench-dev"


@contextmanager
def dev_pdf(name: str) -> Iterator[pymupdf.Document]:
    """The dev half's PDF `name`, open (skips the test where it is not there)."""
    path = BENCH / "pdfs" / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    with pymupdf.open(path) as document:
        yield document
