"""A document's title, from real files through the real layout parser (interleaf/structure/title.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from interleaf.parse.config import ParseConfig
from interleaf.parse.facts import DocumentFacts, document_facts
from interleaf.parse.registry import get_parser
from interleaf.parse.stage import DocumentInput, ParseOutput, parse_document
from interleaf.structure.title import document_title, is_part_name, outline_root


def _parse(path: Path, facts: DocumentFacts | None = None) -> ParseOutput:
    data = path.read_bytes()
    doc = DocumentInput(hashlib.sha256(data).hexdigest(), path.name, str(path), data)
    return parse_document(doc, get_parser(ParseConfig()), "fp", facts=facts)


def test_a_manual_that_opens_on_its_table_of_contents_is_not_called_so(corpus: Path) -> None:
    """The 619-page game manual has no metadata title and three roots in its outline; its first page's
    title is "Table of Contents". Only that page is parsed (its facts say one page)."""
    path = corpus / "scale" / "game-manual-619p.pdf"
    facts = document_facts(path.read_bytes(), path.name)
    assert facts.title is None and outline_root(facts.outline) is None
    parsed = get_parser(ParseConfig()).parse(path.read_bytes(), path.name, facts=DocumentFacts(1, None, facts.outline))
    assert parsed.page_title == "Table of Contents"
    out = _parse(path, DocumentFacts(1, None, facts.outline))
    assert out.documents.column("title").to_pylist() == [None]  # the file's name stands for it
    root = out.sections.to_pylist()[0]
    assert root["level"] == 0 and root["title"] == ""


def test_an_outline_with_one_root_names_the_document_before_the_first_pages_heading(corpus: Path) -> None:
    """A page of the LayoutParser paper: no metadata title, its first title on the page a section's
    ("3.1 Layout Detection Models"), and one bookmark, the paper's title."""
    path = corpus / "docs" / "layoutparser-table-page.pdf"
    parsed = get_parser(ParseConfig()).parse(path.read_bytes(), path.name)
    assert parsed.title is None and parsed.page_title == "3.1 Layout Detection Models"
    out = _parse(path)
    paper = "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
    assert out.documents.column("title").to_pylist() == [paper]
    assert out.sections.to_pylist()[0]["title"] == paper  # the section tree's root


def test_the_metadata_title_comes_first(corpus: Path) -> None:
    path = corpus / "scale" / "irs-manual-400p.pdf"
    facts = document_facts(path.read_bytes(), path.name)
    assert facts.outline[0].title == "Manual Transmittal" and outline_root(facts.outline) is None
    assert document_title(facts.title, facts.outline, "EFFECTIVE DATE") == "2.3.59 (Rev 12/22)"


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("Table of Contents", True),
        ("CONTENTS", True),
        ("Contents:", True),
        ("1 Introduction", True),
        ("IV. References", True),
        ("Abstract", True),
        ("Introduction to Ray Data", False),
        ("Index Funds in Practice", False),
        ("Codex DAO", False),
    ],
)
def test_part_names(text: str, part: bool) -> None:
    assert is_part_name(text) is part
