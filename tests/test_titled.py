"""What a thing is titled (titled.py), on the dev half's course outline
(../shared/benchmarks/mmlongbench-dev): page 7 lists a unit's assignments, one of them "Critical
Thinking Case Study- <its title>—submit on ...", under the heading "Unit 8 Key Assignments:"; page
6 opens the unit with "UNIT 8: <the unit's title>", the title the fitted ranker picks without the rule."""

from __future__ import annotations

from interleaf.evaluate.metrics.correctness import answer_correct
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest
from interleaf.generate.titled import thing_asked
from tests.support.dev_half import dev_question, parsed_context

OUTLINE = "f8d3a162ab9507e021d83dd109118b60.pdf"


def test_the_kind_of_thing_a_question_asks_the_title_of() -> None:
    assert thing_asked("What is the title of the keynote given on day 2?") == "keynote"
    assert thing_asked("What is the name of the ferry in the photo?") == "ferry"
    assert thing_asked("What is the title of case study given under unit-8 in table?") == "case study"
    assert thing_asked("Who is the harbour master?") is None
    assert thing_asked("What is the title of the of the chart?") is None  # a doubled article names nothing


def test_the_title_printed_after_the_kind_of_thing_answers() -> None:
    context = parsed_context(OUTLINE, (5, 6), ("text", "reference", "title"))
    gold = dev_question("mlb-D-245")
    request = AnswerRequest("q", gold["question"], context)
    (answer,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert answer_correct(answer.markdown, gold["must_include"]), answer.markdown
    assert answer.short_answer == gold["answer"], answer.short_answer
