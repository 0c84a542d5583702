"""A running foot the parser left in the text is never the answer (boilerplate.py), and a date is
written with a month, a year or figures, not a phone number's digits (relevance.gives_value): on the
dev half's hearing transcript (../shared/benchmarks/mmlongbench-dev), each page of which ends with a
printer's line "VerDate 0ct 09 2002 09:18 May 18, 2004 ... Frm 0000N", and whose cover prints a
sales office's phone "(866) 512–1800" above the hearing's date."""

from __future__ import annotations

import pytest

from interleaf.evaluate.mmlongbench import score
from interleaf.generate.asking import question_parts
from interleaf.generate.boilerplate import repeated_on_pages
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.relevance import gives_value
from tests.support.dev_half import dev_pdf, dev_question

HEARING = "e639029d16094ea71d964e2fb953952b.pdf"


@pytest.fixture(scope="module")
def blocks() -> list[tuple[int, str]]:
    """(page_idx, text) of each text block of the transcript."""
    with dev_pdf(HEARING) as document:
        return [(page.number, b[4].strip()) for page in document for b in page.get_text("blocks") if b[4].strip()]


def test_a_text_printed_on_page_after_page_is_furniture(blocks: list[tuple[int, str]]) -> None:
    whole = "\n".join(text for _, text in blocks)
    on_fifth = [
        ContextQuote(f"b{i}", "text", i, "h", HEARING, 4, "text", t) for i, (p, t) in enumerate(blocks) if p == 4
    ]
    furniture = [q.text for q in on_fifth if repeated_on_pages(q, whole)]
    assert len(furniture) == 1 and furniture[0].startswith("VerDate"), furniture
    assert not repeated_on_pages(on_fifth[0], None)  # corpus scope: no document's text to count in


def test_a_phone_number_is_no_date() -> None:
    (part,) = question_parts("What date is mentioned on the cover?")
    assert part.want == "date"
    assert not gives_value(part, "Phone: toll free (866) 512–1800; DC area (202) 512–1800")
    assert gives_value(part, "Tuesday, October 7, 2003")
    assert gives_value(part, "Filed 24/03/2015")


def test_the_date_at_the_beginning_of_the_page(blocks: list[tuple[int, str]]) -> None:
    q = dev_question("mlb-D-166")
    # "page(1)": the file's first page and the one printed "(1)", the fifth
    context = tuple(
        ContextQuote(f"b{i}", "text", n, "h", HEARING, p, "text", t)
        for n, (i, (p, t)) in enumerate(((i, b) for i, b in enumerate(blocks) if b[0] in (0, 4)), start=1)
    )
    whole = "\n".join(text for _, text in blocks)
    request = AnswerRequest(
        "q", q["question"], context, documents_text=whole, named_pages=frozenset({("h", 0), ("h", 4)})
    )
    (a,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert score(q["answer"], a.short_answer or "", q["answer_format"]) == 1.0, a.markdown
    assert "VerDate" not in a.markdown, a.markdown
