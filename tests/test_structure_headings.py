"""Numbered headings and references: the labels of long documents, as their pages print them."""

from __future__ import annotations

import pytest

from interleaf.structure.headings import find_references, number_key, parse_heading


@pytest.mark.parametrize(
    ("text", "label", "title", "continued", "depth", "parent"),
    [
        # heading blocks as the layout parser gives them from irs-manual-400p.pdf (pages 9, 53, 7)
        (
            "2.3.59.5\n(01-16-2020)\nRestoring RRR Tax\nModules to Master File (1) Recoverable Retention",
            "2.3.59.5",
            "Restoring RRR Tax Modules to Master File",
            False,
            4,
            "2.3.59",
        ),
        (
            "Exhibit 2.3.59-14 (Cont. 3) (01-17-2017)\nCommand Code BMFOL Entity Display",
            "Exhibit 2.3.59-14",
            "Command Code BMFOL Entity Display",
            True,
            4,
            "2.3.59",
        ),
        (
            "2.3.59.1.6\n(01-17-2023)\nTerms/Deﬁnitions/\nAcronyms",
            "2.3.59.1.6",
            "Terms/Definitions/Acronyms",
            False,
            5,
            "2.3.59.1",
        ),
        # an outline entry of the same manual
        (
            "2.3.59-14   Command Code BMFOL Entity Display",
            "2.3.59-14",
            "Command Code BMFOL Entity Display",
            False,
            4,
            "2.3.59",
        ),
        ("Chapter 12: The Long Road", "Chapter 12", "The Long Road", False, 1, None),
        ("APPENDIX B Glossary", "Appendix B", "Glossary", False, 1, None),
        ("Part III Income", "Part III", "Income", False, 1, None),
        ("Table 2\u20132 Results by year", "Table 2-2", "Results by year", False, 2, "2"),
    ],
)
def test_headings_are_read_from_the_first_line(
    text: str, label: str, title: str, continued: bool, depth: int, parent: str | None
) -> None:
    h = parse_heading(text)
    assert h is not None
    assert (h.label, h.title, h.continued, h.depth, h.parent_key) == (label, title, continued, depth, parent)


@pytest.mark.parametrize(
    "text",
    [
        "5.3 percent of the households reported",  # a sentence opening with a number
        "11 54-55 No Merge Code; TC006 only",  # a table row: line, positions, field
        "Hard in Hightown: Chapter 12",  # a label inside a title is no heading of its own
        "Exhibits",  # the kind word alone
        "In the 2.3.59.6 format the command code defaults to page one and the rest of this long line",
    ],
)
def test_sentences_and_rows_are_not_headings(text: str) -> None:
    assert parse_heading(text) is None


def test_references_in_a_question_keep_their_kind_and_number() -> None:
    question = (
        "Per IRM 2.3.59 and Exhibit 2.3.59\u201312, what does section 2.3.59.6 say; see Table 2-2, "
        "2.3.59.1.1 and §4.2, not 3.5 million"
    )
    found = [(r.kind, r.number, question[r.start : r.end]) for r in find_references(question)]
    # "IRM" names no kind of part: its number is a bare section number (no document's own word is
    # a kind word in interleaf/)
    assert found == [
        ("", "2.3.59", "2.3.59"),
        ("exhibit", "2.3.59-12", "Exhibit 2.3.59\u201312"),
        ("section", "2.3.59.6", "section 2.3.59.6"),
        ("table", "2-2", "Table 2-2"),
        ("", "2.3.59.1.1", "2.3.59.1.1"),
        ("section", "4.2", "§4.2"),
    ]
    assert number_key("2.3.59\u201312") == number_key("2.3.59-12") == "2.3.59-12"
