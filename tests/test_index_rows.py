"""BM25 over the rows of tables and figures (interleaf/index/bm25_rows.py), on a real 10-K of
MMLongBench-Doc's dev half: a question naming one line item of the balance sheet finds the statement
that prints it, which BM25 over whole quotes ranks below the notes that repeat the item's name."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pyarrow as pa
import pymupdf
import pytest

from interleaf.config import Settings
from interleaf.describe.reading import ReadingSettings, page_texts, read_quote
from interleaf.index.bm25 import BM25Retriever
from interleaf.index.bm25_rows import BM25RowsRetriever, rows_of
from interleaf.index.corpus import QuoteCorpus
from interleaf.index.registry import get_retriever
from interleaf.index.retriever_config import BM25Config, BM25RowsConfig
from interleaf.pdf.render import render_bgr
from interleaf.pdf.words import words_in_box
from tests.conftest import CORPUS

TEN_K = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs" / "BESTBUY_2023_10K.pdf"
BALANCE_SHEET = 38  # page index of the Consolidated Balance Sheets ("Goodwill 1,383 1,384")
QUESTION = "What goodwill does Best Buy have for the fiscal year ending January 28, 2023?"


# the 10-K's figure quotes that print "goodwill", as the layout parser boxed them (page index, box)
GOODWILL_FIGURES = {
    27: (13.2, 149.4, 599.7, 593.4),
    BALANCE_SHEET: (8.0, 53.9, 600.5, 588.1),
    60: (12.3, 69.7, 599.0, 335.7),
}


@pytest.fixture(scope="module")
def goodwill_pages() -> tuple[QuoteCorpus, pa.Table]:
    """The figure quotes that name goodwill, their text read as the describe stage reads a box, and
    the 10-K's paragraphs (its text blocks) that name it."""
    if not TEN_K.exists():
        pytest.skip(f"{TEN_K} is not here")
    corpus = QuoteCorpus()
    with pymupdf.open(TEN_K) as document:
        pages = page_texts(document, {}, set(GOODWILL_FIGURES), None, set(GOODWILL_FIGURES))
        for i, box in GOODWILL_FIGURES.items():
            quote = {"kind": "figure", "bbox": list(box)}
            inside = words_in_box(list(pages[i].words), box)
            render = functools.partial(render_bgr, document[i], 72)
            read = read_quote(quote, inside, pages[i], render, None, ReadingSettings("t"))  # type: ignore[arg-type]
            corpus.quote_ids.append(f"p{i}")
            corpus.doc_ids.append("10-K")
            corpus.page_idx.append(i)
            corpus.kinds.append("figure")
            corpus.texts.append(read["table_md"] or read["ocr_text"] or "")
        for page in document:
            for block in page.get_text("blocks"):
                text = " ".join(block[4].split())
                if "goodwill" in text.lower() and len(text.split()) >= 12 and page.number not in GOODWILL_FIGURES:
                    corpus.quote_ids.append(f"p{page.number}-b{block[5]}")
                    corpus.doc_ids.append("10-K")
                    corpus.page_idx.append(page.number)
                    corpus.kinds.append("text")
                    corpus.texts.append(text)
    assert all("goodwill" in t.lower() for t in corpus.texts)
    assert corpus.kinds.count("text") >= 4
    return corpus, pa.table({"quote_id": corpus.quote_ids, "text": corpus.texts})


def _pages_ranked(retriever: BM25Retriever, corpus: QuoteCorpus, stored: pa.Table) -> list[int]:
    """The pages of the quotes the retriever indexes, best first."""
    retriever.load(corpus, stored)
    scores = retriever.scores([QUESTION])[0]
    indexed = set(retriever.applies_to(corpus))
    return [corpus.page_idx[j] for j in np.argsort(-scores, kind="stable") if j in indexed]


def test_a_line_item_finds_its_statement_by_its_row(goodwill_pages: tuple[QuoteCorpus, pa.Table]) -> None:
    corpus, stored = goodwill_pages
    whole = _pages_ranked(BM25Retriever(BM25Config(name="bm25")), corpus, stored)
    by_rows = _pages_ranked(BM25RowsRetriever(BM25RowsConfig(name="rows")), corpus, stored)
    assert by_rows.index(BALANCE_SHEET) <= 1, by_rows
    assert whole.index(BALANCE_SHEET) >= 4, whole  # the notes' paragraphs on goodwill come first


def test_rows_are_the_label_and_value_lines(goodwill_pages: tuple[QuoteCorpus, pa.Table]) -> None:
    corpus, _ = goodwill_pages
    rows = rows_of(corpus.texts[corpus.page_idx.index(BALANCE_SHEET)])
    assert "Goodwill 1,383 1,384" in rows
    assert "| Total current assets | 8,802 |" not in rows and rows_of("| Total current assets | 8,802 |") == [
        "Total current assets 8,802"
    ]
    assert not any(r in ("Assets", "Current assets") for r in rows)  # a label with no value is no row


def test_the_retriever_is_configured_by_kind_and_survives_a_snapshot(
    goodwill_pages: tuple[QuoteCorpus, pa.Table],
) -> None:
    corpus, stored = goodwill_pages
    settings = Settings.model_validate(
        {"index": {"retrievers": [{"kind": "bm25", "name": "bm25"}, {"kind": "bm25_rows", "name": "rows"}]}}
    )
    retriever = get_retriever(settings.index.retriever("rows"))
    assert isinstance(retriever, BM25RowsRetriever)
    retriever.load(corpus, stored)
    before = retriever.scores([QUESTION])
    restored = pickle.loads(pickle.dumps(retriever))  # a snapshot pickles the loaded retrievers
    assert np.array_equal(restored.scores([QUESTION]), before)
    # a text quote is no table: the rows retriever indexes image quotes only
    assert retriever.applies_to(QuoteCorpus(["t"], ["d"], [0], ["text"], ["Goodwill 1,383"])) == []
