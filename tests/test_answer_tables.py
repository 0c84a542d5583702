"""What any reader expects of a table, on the DPR paper's own tables as the pipeline stores them
(docs/dpr-emnlp2020.pdf, ingested by the session): the exact row label wins over one that contains
it, an abbreviation the paper defines finds its column, a superlative is worked out over the
column the question names, and a citation of a table backs a number only in the row and column the
sentence names (interleaf/generate/value_check.py)."""

from __future__ import annotations

import pytest

from interleaf.generate.citations import check_answer
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline import OfflineGenerator
from interleaf.generate.part_answer import counts_another_thing
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.sentences import split_sentences
from tests.conftest import IngestedWarehouse, sql_rows

DOC = "dpr-emnlp2020.pdf"


@pytest.fixture(scope="module")
def context(corpus_warehouse: IngestedWarehouse) -> tuple[ContextQuote, ...]:
    """The paper's tables (image quotes with their table Markdown) and the text quotes that define
    the datasets' abbreviations, numbered as a context numbers them."""
    rows = sql_rows(
        corpus_warehouse.root,
        "select q.quote_id, q.page_idx, q.kind, q.text, q.caption, t.table_md from quotes q "
        "left join quote_texts t on t.quote_id = q.quote_id join documents d on d.doc_id = q.doc_id "
        f"where d.name = '{DOC}' and (t.table_md is not null or q.text like '%(WQ)%') order by q.quote_id",
    )
    numbers = {"text": 0, "image": 0}
    out = []
    for r in rows:
        modality = "image" if r["table_md"] else "text"
        numbers[modality] += 1
        text = r["table_md"] or r["text"]
        out.append(
            ContextQuote(
                r["quote_id"], modality, numbers[modality], "dpr", DOC, r["page_idx"], r["kind"], text, r["caption"]
            )
        )
    assert numbers["text"] >= 1 and any("BM25 + DPR" in (q.text or "") for q in out)
    return tuple(out)


def _answer(context: tuple[ContextQuote, ...], question: str) -> tuple[str, str | None]:
    (a,) = OfflineGenerator(OfflineConfig()).generate([AnswerRequest("q", question, context)], lambda p: b"")
    assert a.error is None
    return a.markdown, a.short_answer


def test_the_exact_row_label_wins_over_one_that_contains_it(context: tuple[ContextQuote, ...]) -> None:
    # "BM25" is the row None/BM25 (59.1), not Single/"BM25 + DPR" (76.6), which also holds the word
    markdown, short = _answer(context, "What Top-20 accuracy does BM25 get on NQ in Table 2?")
    assert "59.1" in markdown and "76.6" not in markdown, markdown
    assert short == "59.1"


def test_an_abbreviation_the_paper_defines_finds_its_column(context: tuple[ContextQuote, ...]) -> None:
    # the table's columns say "WQ"; the paper defines it as WebQuestions
    markdown, short = _answer(context, "What Top-100 accuracy does BM25 get on WebQuestions?")
    assert "71.1" in markdown, markdown
    assert short == "71.1"


def test_a_superlative_is_worked_out_over_the_named_column(context: tuple[ContextQuote, ...]) -> None:
    markdown, short = _answer(context, "Which retriever has the lowest Top-100 accuracy on SQuAD?")
    assert "67.6" in markdown and "the lowest of the table's rows" in markdown, markdown  # Multi DPR
    assert short is not None and "DPR" in short and "BM25" not in short


def test_a_number_of_the_wrong_row_is_not_backed_by_the_table(context: tuple[ContextQuote, ...]) -> None:
    table = next(q for q in context if "BM25 + DPR" in q.text)
    image = f"![Table 2](image{table.number})"
    question = "What Top-20 accuracy does BM25 get on NQ?"
    wrong = check_answer(f"BM25 reaches 76.6 Top-20 accuracy on NQ. {image}", context, question=question)
    right = check_answer(f"BM25 reaches 59.1 Top-20 accuracy on NQ. {image}", context, question=question)
    (w,), (r,) = wrong.sentences, right.sentences
    assert w.supported is False and not w.values_backed
    assert "76.6 not under the sentence's labels" in w.citations[0].reason
    assert r.supported is True and r.values_backed, r.citations[0].reason
    # the answer-level verdict says no for the wrong row, yes for the right one
    assert wrong.relevance is not None and not wrong.relevance.addresses
    assert right.relevance is not None and right.relevance.addresses
    # another column of the right row is no better: 66.9 is TriviaQA's
    other = check_answer(f"BM25 reaches 66.9 Top-20 accuracy on NQ. {image}", context, question=question)
    assert other.sentences[0].supported is False


def test_a_difference_is_worked_out_from_the_two_cells(context: tuple[ContextQuote, ...]) -> None:
    # "BM25 + DPR" (76.6) against "BM25" (59.1), Top-20 on NQ: the answer gives both cells and what
    # they differ by, and the short answer is the difference
    question = "How much higher is the Top-20 accuracy of BM25 + DPR than BM25 on NQ in Table 2?"
    markdown, short = _answer(context, question)
    assert "76.6" in markdown and "59.1" in markdown and "a difference of 17.5 (76.6 − 59.1)" in markdown, markdown
    assert short == "17.5"
    # "between X and Y" names the two sides too; the larger is written first
    _, short = _answer(
        context, "What is the difference between the Top-20 accuracy of BM25 and DPR on TREC in Table 2?"
    )
    assert short == "8.9"  # 79.8 (Single DPR) − 70.9 (BM25)
    # the worked-out value is checked through the cells it comes from: backed here, not when a
    # cell is another row's
    (sentence,) = check_answer(markdown, context, question=question).sentences
    assert sentence.supported is True and sentence.values_backed, sentence.citations[0].reason
    table = next(q for q in context if "BM25 + DPR" in q.text)
    wrong = (  # 78.4 is Single DPR's, not BM25's
        "BM25 + DPR gets 76.6 and BM25 gets 78.4 Top-20 on NQ, a difference of 1.8 (78.4 − 76.6). "
        f"![Table 2](image{table.number})"
    )
    assert check_answer(wrong, context, question=question).sentences[0].supported is False


def test_a_sentence_counting_another_thing_does_not_answer_how_many(corpus_warehouse: IngestedWarehouse) -> None:
    # "how many questions per second": the paper's sentence on its batch size holds "question" and
    # the number 128, far apart; the sentence on its speed states 995.0 beside "questions"
    # (part_answer.counts_another_thing). Read together, the speed is the answer
    rows = sql_rows(
        corpus_warehouse.root,
        "select q.quote_id, q.page_idx, q.kind, q.text from quotes q join documents d on d.doc_id = q.doc_id "
        f"where d.name = '{DOC}' and (q.text like '%questions per second%' or q.text like '%batch size of 128%') "
        "order by q.page_idx",
    )
    batch = next(s for r in rows for s in split_sentences(r["text"]) if "batch size of 128" in s)
    speed = next(s for r in rows for s in split_sentences(r["text"]) if "questions per second" in s)
    question = "How many questions per second can DPR process?"
    assert counts_another_thing(question, "sentence", batch), batch
    assert not counts_another_thing(question, "sentence", speed), speed
    # a table row states its numbers under headers, however far from the word; a question not asking
    # "how many" is not read so
    assert not counts_another_thing(question, "row", batch)
    assert not counts_another_thing("What batch size does DPR use?", "sentence", batch)
    context = tuple(
        ContextQuote(r["quote_id"], "text", n, "dpr", DOC, r["page_idx"], r["kind"], r["text"], score=1.0 / n)
        for n, r in enumerate(rows, start=1)
    )
    markdown, short = _answer(context, question)
    assert "995.0" in markdown and short in ("995", "995.0") and "128" not in markdown, (markdown, short)
    # given the batch-size quote alone, the part is refused: without the rule it answers 128
    alone = tuple(q for q in context if "batch size of 128" in q.text)
    markdown, short = _answer(alone, question)
    assert short == "Not answerable" and "128" not in markdown, (markdown, short)
