"""The offline generator on a context cut from a real paper: MAVIS pages 3-4, every text block a text
quote and every table or figure an image quote (caption + the table as Markdown), in page order,
so the retriever's ranking gives the composer no help."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from interleaf.expand.config import ExpandConfig
from interleaf.expand.rules import RulesExpander
from interleaf.generate.abstain import NOT_IN_DOCUMENTS
from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.protocol import AnswerRequest, ContextQuote, Generator
from interleaf.generate.sentences import numbers_in, split_sentences

DOC = "mavis-aaai2026.pdf"
PAGES = (2, 3)  # 0-based: the data-collection pages, Table 2 and Figure 2


def _inside(box: tuple[float, ...], area: tuple[float, ...]) -> bool:
    return box[0] >= area[0] - 2 and box[1] >= area[1] - 2 and box[2] <= area[2] + 2 and box[3] <= area[3] + 2


@pytest.fixture(scope="module")
def context(corpus: Path) -> tuple[ContextQuote, ...]:
    quotes: list[ContextQuote] = []
    counts = {"text": 0, "image": 0}

    def add(modality: str, page: int, kind: str, text: str, caption: str | None = None, ocr: str | None = None) -> None:
        counts[modality] += 1
        quotes.append(
            ContextQuote(
                f"p{page}-{len(quotes)}", modality, counts[modality], "d1", DOC, page, kind, text, caption, ocr_text=ocr
            )  # type: ignore[arg-type]
        )

    with pymupdf.open(corpus / "docs" / DOC) as pdf:
        for page_idx in PAGES:
            page = pdf[page_idx]
            tables = page.find_tables().tables
            blocks = [b for b in page.get_text("blocks") if b[4].strip()]
            captions = [b for b in blocks if b[4].startswith(("Table ", "Figure "))]
            for b in blocks:
                if b in captions or any(_inside(b[:4], t.bbox) for t in tables) or len(b[4].split()) < 8:
                    continue
                add("text", page_idx, "text", b[4])
            for cap in captions:
                table = next((t for t in tables if cap[4].startswith("Table ")), None)
                markdown = table.to_markdown() if table else None
                kind = "table" if table else "figure"
                add("image", page_idx, kind, f"{cap[4]}\n{markdown or ''}".strip(), cap[4], markdown)
    return tuple(quotes)


def _ask(context: tuple[ContextQuote, ...], question: str, config: OfflineConfig | None = None) -> str:
    generator = OfflineGenerator(config or OfflineConfig())
    clauses = tuple(c.text for c in RulesExpander(ExpandConfig()).expand(question))  # as the pipeline expands it
    (answer,) = generator.generate([AnswerRequest("q", question, context, clauses)], lambda path: b"")
    assert answer.question_id == "q" and answer.error is None
    return answer.markdown


def _quote_with(context: tuple[ContextQuote, ...], needle: str) -> ContextQuote:
    return next(q for q in context if needle in q.text)


def test_it_is_a_generator_with_no_model_and_no_prompt() -> None:
    generator: Generator = OfflineGenerator(OfflineConfig())
    assert (generator.name, generator.model, generator.input_mode) == ("offline", None, "text")
    # no prompt; its version is the fitted ranker's file and the similarity model, what moves its answers
    assert generator.prompt_hashes() == [] and set(generator.version()) == {"answer_ranker", "similarity"}
    requests = [AnswerRequest("a", "Anything?", ()), AnswerRequest("b", "Else?", ())]
    # nothing retrieved: each question gets the abstention, as data
    out = generator.generate(requests, lambda path: b"")
    assert [a.question_id for a in out] == ["a", "b"]
    assert all(not a.answerable and a.abstain_reason == "no quote was retrieved" for a in out)
    assert all(a.markdown.startswith(NOT_IN_DOCUMENTS) for a in out)


def test_a_table_question_opens_with_the_row_that_answers_it(context: tuple[ContextQuote, ...]) -> None:
    answer = _ask(context, "Which textual entailment model scores the highest F1 in Table 2 of the MAVIS paper?")
    table = _quote_with(context, "Qwen3-8B (2025)")
    assert table.modality == "image" and table.kind == "table"
    first = split_sentences(answer)[0]
    # the direct answer first, with the table placed right beside it
    assert "Qwen3-8B" in first and "53.7" in numbers_in(first) and f"](image{table.number})" in first
    checked = check_answer(answer, context)
    assert checked.invalid == 0 and checked.cited_quote_ids[0] == table.quote_id
    assert len(answer.split()) <= 200


def test_a_text_question_cites_the_sentence_holding_the_number(context: tuple[ContextQuote, ...]) -> None:
    answer = _ask(context, "How many VQA instances are left once those an LLM answers correctly are removed?")
    holder = _quote_with(context, "157,586")
    first = split_sentences(answer)[0]
    assert "157,586" in first and f"[{holder.number}]" in first
    assert check_answer(answer, context).cited_quote_ids[0] == holder.quote_id


@pytest.mark.parametrize(
    "question",
    [
        "Which textual entailment model scores the highest F1 in Table 2 of the MAVIS paper?",
        "How many VQA instances remain after the visual-dependency filter, and how many were collected from Reddit?",
        "What does Figure 2 of the MAVIS paper illustrate?",
        "How are irrelevant documents removed before annotation, and which entailment models perform best?",
    ],
)
def test_answers_are_grounded_by_construction(context: tuple[ContextQuote, ...], question: str) -> None:
    answer = _ask(context, question)
    checked = check_answer(answer, context)
    by_id = {q.quote_id: q for q in context}
    assert answer and checked.invalid == 0 and checked.repaired == 0 and checked.markdown == answer
    # every sentence cites a quote of the context, and the quote backs it
    assert checked.sentences and all(s.supported is True for s in checked.sentences), [
        (s.text, [c.reason for c in s.citations]) for s in checked.sentences if s.supported is not True
    ]
    # every number the answer states is in a quote it cites
    cited_numbers = {n for qid in checked.cited_quote_ids for n in numbers_in(by_id[qid].text)}
    assert set(numbers_in(answer)) - {str(by_id[q].page_idx + 1) for q in checked.cited_quote_ids} <= cited_numbers
    # one quote per part of the question, and a figure a cited sentence names
    assert len(checked.cited_quote_ids) <= 3 and len(answer.split()) <= 200


def test_max_words_bounds_the_answer(context: tuple[ContextQuote, ...]) -> None:
    question = "How are irrelevant documents removed before annotation, and which entailment models perform best?"
    long, short = _ask(context, question), _ask(context, question, OfflineConfig(max_words=25))
    assert len(long.split()) > 25 >= len(short.split())
    assert check_answer(short, context).cited_quote_ids  # still cited
    with pytest.raises(ValueError):
        OfflineConfig(max_words=5)


def test_a_table_cell_question_gets_one_sentence_with_the_cell_and_its_labels(
    context: tuple[ContextQuote, ...],
) -> None:
    answer = _ask(context, "What text F1 does Qwen3-8B reach in Table 2 of the MAVIS paper?")
    table = _quote_with(context, "Qwen3-8B (2025)")
    (sentence,) = split_sentences(answer)  # one sentence, the table placed right after it
    assert sentence.endswith(f"](image{table.number})") and "Table 2" in sentence and "Qwen3-8B" in sentence
    assert "53.7" in numbers_in(sentence)
    # the row asked for, not the table: no other model's row
    assert "SkyworkVLReward" not in sentence and "RoBERTa" not in sentence, sentence


def test_a_part_the_context_does_not_answer_is_said_missing(context: tuple[ContextQuote, ...]) -> None:
    generator = OfflineGenerator(OfflineConfig())
    question = (
        "How many VQA instances are left once those an LLM answers correctly are removed, "
        "and how many dollars did that cost?"
    )
    (answer,) = generator.generate([AnswerRequest("q", question, context)], lambda path: b"")
    first, *rest = split_sentences(answer.markdown)
    assert answer.answerable and "157,586" in first and re.search(r"\[\d+\]", first)
    assert rest and rest[-1].startswith(NOT_IN_DOCUMENTS) and "dollars" in rest[-1]
    verdict = check_answer(answer.markdown, context, question=question).relevance
    assert verdict is not None and verdict.addresses and verdict.reason.endswith("part 2 said missing")


def test_an_image_two_parts_are_read_from_is_placed_once(context: tuple[ContextQuote, ...]) -> None:
    # qa_dev's q001: both parts are answered from Table 2's rows; each sentence had placed the table
    question = (
        "Which table of the MAVIS paper compares entailment models for verifying groundedness, "
        "and which textual entailment model scores the highest F1 in it?"
    )
    answer = _ask(context, question)
    table = _quote_with(context, "Qwen3-8B (2025)")
    placed = re.findall(r"\]\(image(\d+)\)", answer)
    assert placed.count(str(table.number)) == 1, answer
    assert len(placed) == len(set(placed)), answer
    # the sentences it answered both parts with stay cited by the one placement, and backed by it
    checked = check_answer(answer, context)
    assert checked.invalid == 0 and checked.sentences, answer
    assert all(s.supported is True and s.citations for s in checked.sentences), [
        (s.text, [c.reason for c in s.citations]) for s in checked.sentences
    ]
    assert "53.7" in numbers_in(answer), answer  # the highest textual F1, Qwen3-8B's


def test_a_sentence_naming_an_image_already_placed_keeps_its_citation_and_places_it_no_more(
    context: tuple[ContextQuote, ...],
) -> None:
    # part 1 is read from Table 2's rows, which places it; part 2 from the paragraph saying "Table 2
    # shows that …", a sentence that would place Table 2 after itself
    question = (
        "Which textual entailment model scores the highest F1 in Table 2, "
        "and which model performs the best for image entailment?"
    )
    answer = _ask(context, question)
    table = _quote_with(context, "Qwen3-8B (2025)")
    paragraph = _quote_with(context, "Table 2 shows that")
    placed = re.findall(r"\]\(image(\d+)\)", answer)
    assert placed == [str(table.number)], answer
    (naming,) = [s for s in split_sentences(answer) if s.startswith("Table 2 shows that")]
    assert f"[{paragraph.number}]" in naming and "](image" not in naming, answer
    checked = check_answer(answer, context)
    assert checked.invalid == 0 and all(s.supported is True for s in checked.sentences if s.citations), answer
