"""How a thing is done to (how_done.py), on the dev half's Best Buy 10-K
(../shared/benchmarks/mmlongbench-dev): asked how the company records its merchandise inventories,
the ranker prefers the sentences of page 4 that name the company; page 45 says it of the
inventories, in the passive, without the company's name."""

from __future__ import annotations

import re

from interleaf.generate.config import OfflineConfig
from interleaf.generate.how_done import done_to
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from tests.support.dev_half import dev_pdf

REPORT = "BESTBUY_2023_10K.pdf"


def test_a_passive_sentence_on_the_thing_asked_answers_how() -> None:
    assert done_to("How does the harbour master record late arrivals?", "Late arrivals are recorded in the tide book.")
    assert done_to("How are late arrivals recorded?", "Late arrivals are recorded in the tide book.")
    assert done_to("How do they plan the route?", "The route is planned each week.")
    assert not done_to("How does the harbour master record late arrivals?", "Late fees are recorded monthly.")
    assert not done_to("What is recorded for late arrivals?", "Late arrivals are recorded in the tide book.")


def test_the_sentence_on_the_thing_answers_not_those_naming_the_company() -> None:
    with dev_pdf(REPORT) as document:  # each of the PDF's text blocks a quote, as the parser makes them
        blocks = [(i, " ".join(b[4].split())) for i in (3, 44) for b in document[i].get_text("blocks")]
    context = tuple(
        ContextQuote(f"p{i}-{n}", "text", n + 1, "bby", REPORT, i, "text", text)
        for n, (i, text) in enumerate(b for b in blocks if b[1])
    )
    question = "how does Best Buy record Merchandise inventories?"  # mlb-D-289, as written
    (answer,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, context)], lambda p: b"")
    assert "lower of cost or net realizable value" in answer.markdown, answer.markdown
    cited = {context[int(n) - 1].page_idx for n in re.findall(r"\[(\d+)\]", answer.markdown)}
    assert cited == {44}, answer.markdown
