"""Who holds a role where a page prints a name over it (role_names.py), on the dev half's state
health plan (../shared/benchmarks/mmlongbench-dev): its cover prints "Rick Scott" over "GOVERNOR";
its fourth page says what the plan is, in a sentence the ranker prefers for "the name of the
governor". Asked of the first page, the name is the answer; asked of the last (the dev half's
unanswerable twin), it is not."""

from __future__ import annotations

import pytest

from interleaf.evaluate.mmlongbench import score
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.role_names import role_asked
from tests.support.dev_half import dev_pdf, dev_question

PLAN = "e79deb02a0c0e87511080836c5d4347b.pdf"


@pytest.fixture(scope="module")
def context() -> tuple[ContextQuote, ...]:
    """The cover as the figure the parser makes of it (its text as OCR-text), and page 4's text."""
    with dev_pdf(PLAN) as document:
        cover = "\n".join(line.strip() for line in document[0].get_text().splitlines() if line.strip())
        fourth = " ".join(document[3].get_text().split())
    return (
        ContextQuote("p4", "text", 1, "plan", PLAN, 3, "text", fourth),
        ContextQuote("p1", "image", 1, "plan", PLAN, 0, "figure", cover, ocr_text=cover),
    )


def test_the_role_a_question_asks_the_holder_of() -> None:
    assert role_asked("What is the name of the governor as mentioned on the first page?") == "governor"
    assert role_asked("Who is the chief kettle officer of Vireo?") == "chief kettle officer"
    assert role_asked("Who is the defendant?") == "defendant"
    assert role_asked("What is the name of the company that created this presentation?") == "company"
    assert role_asked("How many governors are there?") is None


def test_the_name_over_the_role_on_the_page_named(context: tuple[ContextQuote, ...]) -> None:
    generator = OfflineGenerator(OfflineConfig())
    first, last = dev_question("mlb-D-130"), dev_question("mlb-D-131")
    (a,) = generator.generate(
        [AnswerRequest("q", first["question"], context, named_pages=frozenset({("plan", 0)}))], lambda p: b""
    )
    assert score(first["answer"], a.short_answer or "", first["answer_format"]) == 1.0, a.markdown
    assert "“Rick Scott”" in a.markdown and "(image1)" in a.markdown, a.markdown
    # the last page prints no governor: the cover's name is no answer there
    (b,) = generator.generate(
        [AnswerRequest("q", last["question"], context, named_pages=frozenset({("plan", 16)}))], lambda p: b""
    )
    assert "Rick Scott" not in b.markdown, b.markdown
