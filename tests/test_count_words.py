"""A count a document spells out answers "how many" (number_words.py), on the dev half's paper on
LLMs as few-shot information extractors (../shared/benchmarks/mmlongbench-dev): its page 2 says
"We run experiments on nine widely-used datasets across four IE tasks." and nowhere prints the
datasets' count in figures."""

from __future__ import annotations

from interleaf.generate.asking import question_parts
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.number_words import asks_count, counts_in_words
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.relevance import gives_value
from tests.support.dev_half import dev_question, parsed_context

PAPER = "2303.08559v2.pdf"


def test_a_count_in_words_answers_how_many_and_is_written_in_figures() -> None:
    context = parsed_context(PAPER, (1,), ("text",))
    assert any("nine widely-used datasets" in q.text for q in context)
    question = dev_question("mlb-D-039")["question"]
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, context)], lambda p: b"")
    assert a.error is None and a.short_answer == "9", (a.short_answer, a.markdown)
    assert "nine widely-used datasets" in a.markdown and a.markdown.endswith("In figures: 9."), a.markdown
    checked = check_answer(a.markdown, context, question=question)
    assert all(s.supported for s in checked.sentences if s.citations), checked.sentences


def test_shares_pronouns_and_other_questions_are_no_counts() -> None:
    assert counts_in_words("Twenty-one sites and twelve teams") == ["21", "12"]
    # a share, a pronoun, an order, a word ending its sentence: none is a count of things
    for text in ("About three-in-ten say so", "one of the tasks", "two-thirds of adults", "the top ten."):
        assert counts_in_words(text) == [], text
    (part,) = question_parts("How many datasets are used for experiments of this paper?")
    assert gives_value(part, "We run experiments on nine widely-used datasets.")
    # a question that asks no count is not answered by one spelled out
    (other,) = question_parts("What accuracy does the tagger reach?")
    assert not gives_value(other, "We run experiments on nine widely-used datasets.")
    assert not asks_count("How many percent of adults go online?")


def test_a_float_s_label_is_no_count() -> None:
    # a figure's title counting what it shows: "Figure 3" labels it, "Five" counts
    title = ContextQuote(
        "t1", "text", 1, "coast", "coast.pdf", 0, "title", "Figure 3. Five Harbours of the Northern Coast"
    )
    question = "How many harbours does the northern coast have?"
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, (title,))], lambda p: b"")
    assert a.short_answer == "5", (a.short_answer, a.markdown)
