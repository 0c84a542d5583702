"""MMLongBench-Doc's dev half beside the repository (../shared/benchmarks/mmlongbench-dev), for the
tests that read its PDFs and questions: a test is skipped, naming the path, where a file is not there."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pymupdf
import pytest

from interleaf.describe.table_structure import markdown_table
from interleaf.generate.protocol import ContextQuote
from interleaf.parse.config import LayoutConfig
from interleaf.parse.layout.parser import parse_page
from interleaf.pdf.rules import vector_rules
from interleaf.pdf.words import text_layer_words, words_in_box
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


def dev_question(question_id: str) -> dict[str, Any]:
    """The dev half's question `question_id` as qa_dev.jsonl gives it (question, answer, must_include)."""
    path = BENCH / "qa_dev.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return next(q for q in map(json.loads, path.read_text().splitlines()) if q["id"] == question_id)


def parsed_context(name: str, pages: Iterable[int], kinds: Iterable[str]) -> tuple[ContextQuote, ...]:
    """The quotes of the kinds given on the PDF's pages (0-based, in that order), as the parser makes
    them, numbered as a context of text quotes in that order."""
    kinds = set(kinds)
    with dev_pdf(name) as document:
        quotes = [(page, q) for page in pages for q in parse_page(document[page], LayoutConfig()).quotes]
    kept = [(page, q) for page, q in quotes if q.text and q.kind in kinds]
    return tuple(
        ContextQuote(f"q{n}", "text", n + 1, name, name, page, q.kind, q.text) for n, (page, q) in enumerate(kept)
    )


def parsed_tables(name: str, pages: Iterable[int]) -> tuple[ContextQuote, ...]:
    """The tables the parser finds on the PDF's pages (0-based, in that order), each as describe
    reads it: the text layer's words in the table's box, as Markdown; numbered as images in that order."""
    out: list[ContextQuote] = []
    with dev_pdf(name) as document:
        for page_idx in pages:
            page = document[page_idx]
            words, _ = text_layer_words(page)
            for q in parse_page(page, LayoutConfig()).quotes:
                if q.kind == "table":
                    md = markdown_table(words_in_box(words, q.bbox), rules=vector_rules(page).inside(q.bbox))
                    n = len(out) + 1
                    out.append(ContextQuote(f"t{n}", "image", n, name, name, page_idx, "table", md or "", q.caption))
    return tuple(out)
