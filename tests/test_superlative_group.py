"""A "which ... gives X the highest ..." question compares the rows X names, on the dev half's paper
on attributed answers (../shared/benchmarks/mmlongbench-dev, 2310.05634v2.pdf): its Table 3 (page 7)
holds three ChatGPT rows, one per temperature; its Table 6 (page 8) holds one ChatGPT row among the
other models', the highest of that table, which compares no temperatures (offline_scoring._named_group).
The short answer is the temperature asked, not the row's whole label (short_answer._within_group).
The tables are read as describe reads them: the text layer's words in the parser's table boxes."""

from __future__ import annotations

from dataclasses import replace

from interleaf.evaluate.metrics.correctness import answer_correct
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from tests.support.dev_half import dev_question, parsed_context, parsed_tables

PAPER = "2310.05634v2.pdf"


def _context() -> tuple[ContextQuote, ...]:
    """Page 8's text and its Table 6 ahead of page 7's tables, Table 3 last, as the retriever ranked
    them for the question; each table as its Markdown."""
    tables = (*parsed_tables(PAPER, (7,)), *reversed(parsed_tables(PAPER, (6,))))
    numbered = (replace(q, quote_id=f"t{n}", number=n) for n, q in enumerate(tables, 1))
    return (*parsed_context(PAPER, (7,), ("text",)), *numbered)


def test_the_rows_the_question_names_are_compared_not_a_table_naming_one() -> None:
    context = _context()
    table_6 = next(q for q in context if q.modality == "image")
    assert "ChatGPT(0.5)" in table_6.text and table_6.page_idx == 7  # one ChatGPT row
    gold = dev_question("mlb-D-011")
    (answer,) = OfflineGenerator(OfflineConfig()).generate(
        [AnswerRequest("q", gold["question"], context)], lambda p: b""
    )
    assert answer_correct(answer.markdown, gold["must_include"]), answer.markdown
    assert answer.short_answer == gold["answer"] == "0.1" and "ChatGPT rows" in answer.markdown, answer.markdown
