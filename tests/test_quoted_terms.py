"""A term the question quotes is searched among the quotes that print it (retrieve.quoted_terms), on
the session's ingested corpus: the DPR paper names "DrQA" in one paragraph, which a question with
many other words about readers and passages does not bring first by itself."""

from __future__ import annotations

import json

from tests.conftest import IngestedWarehouse, run_cli, sql_rows

DOC = "dpr-emnlp2020.pdf"
QUESTION = (
    "What does the question answering reader model do with passages retrieved for open-domain questions, "
    'according to "DrQA"?'
)


def _context(root, *settings: str) -> list[str]:
    answer = json.loads(run_cli(root, "ask", QUESTION, "--doc", DOC, "--json", *settings).stdout)
    return [c["quote_id"] for c in answer["context"]]


def test_the_quote_printing_a_quoted_term_comes_first(corpus_warehouse: IngestedWarehouse) -> None:
    root = corpus_warehouse.root
    printing = sql_rows(
        root,
        f"select q.quote_id from quotes q join documents d using (doc_id) where d.name = '{DOC}' "
        "and q.text like '%DrQA%'",
    )
    assert len(printing) == 1, printing
    (term_quote,) = (r["quote_id"] for r in printing)
    assert _context(root)[0] == term_quote
    # one more list, asked among the one quote that prints the term (the stored clauses say so)
    asked = sql_rows(root, "select kind, n_quotes from asked_clauses where kind like 'scope:“%'")
    assert {(a["kind"], a["n_quotes"]) for a in asked} == {("scope:“DrQA”", 1)}, asked
    # without the list, the question's other words bring other paragraphs ahead of it
    assert _context(root, "--set", "retrieve.quoted_terms=false")[0] != term_quote
