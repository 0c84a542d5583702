"""A difference a question draws between two values of one row, across two tables or in one
(table_cells.difference), on the dev half's paper on step-back prompting
(../shared/benchmarks/mmlongbench-dev, STEPBACK.pdf): its Table 1 (page 5) gives each model's
accuracy on two exams, its Table 2 (page 6) on four question sets; the GPT-4 row is in both, and each
value prints its spread after it in brackets ("79.9% (1.0%)"). The tables are read as describe reads
them: the text layer's words in the parser's table boxes."""

from __future__ import annotations

from interleaf.evaluate.metrics.correctness import answer_correct
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest
from tests.support.dev_half import dev_question, parsed_tables

PAPER = "STEPBACK.pdf"


def _answer(question: str) -> tuple[str, str]:
    tables = parsed_tables(PAPER, (4, 5))
    assert [q.page_idx for q in tables] == [4, 5] and all("GPT-4" in q.text for q in tables)
    (answer,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, tables)], lambda p: b"")
    return answer.markdown, answer.short_answer


def test_a_difference_across_two_tables_takes_the_same_row_in_the_other() -> None:
    gold = dev_question("mlb-D-148")
    markdown, short = _answer(gold["question"])
    assert answer_correct(markdown, gold["must_include"]), markdown
    assert short == "16.7"
    # where the other value is, said and shown: both tables placed
    assert "SituatedQA 63.2% in Table 2 (page 6)" in markdown and markdown.count("](image") == 2, markdown


def test_a_value_s_spread_in_brackets_is_not_a_second_number() -> None:
    """Table 1's PaLM-2L row: 66.4% (0.8%) on physics, 70.9% (0.9%) on chemistry."""
    markdown, short = _answer("How much higher is the accuracy of PaLM-2L on MMLU Chemistry than on MMLU Physics?")
    assert short == "4.5" and "a difference of 4.5% (70.9% − 66.4%)" in markdown, markdown
