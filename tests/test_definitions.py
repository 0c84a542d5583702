"""What a term means (definitions.py), on the dev half's slides on Gestalt principles
(../shared/benchmarks/mmlongbench-dev): page 11 sets the law as a run-in heading ("Law of good
Gestalt.") before the sentence that defines it; the next paragraph repeats the law's name in a
sentence the fitted ranker prefers. The page is read by the parser, which joins the definition the
layout model boxed in two (parse/layout/paragraphs.py)."""

from __future__ import annotations

from interleaf.evaluate.metrics.correctness import answer_correct
from interleaf.generate.config import OfflineConfig
from interleaf.generate.definitions import term_asked
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest
from tests.support.dev_half import dev_question, parsed_context

SLIDES = "0e94b4197b10096b1f4c699701570fbf.pdf"


def test_the_term_a_question_asks_the_meaning_of() -> None:
    assert term_asked("How does the guide define a kettle scale?") == "kettle scale"
    assert term_asked("What is the definition of the Okapi index?") == "okapi index"
    assert term_asked("What is meant by descaling?") == "descaling"
    assert term_asked("What is the kettle's capacity?") is None


def test_the_sentence_after_the_run_in_heading_defines_it() -> None:
    context = parsed_context(SLIDES, (10,), ("text", "reference"))  # the page's quotes as the parser makes them
    gold = dev_question("mlb-D-004")
    request = AnswerRequest("q", gold["question"], context)
    (answer,) = OfflineGenerator(OfflineConfig()).generate([request], lambda p: b"")
    assert answer_correct(answer.markdown, gold["must_include"]), answer.markdown
