"""Words a typesetter broke across two lines with a hyphen come out whole, joined or with their
hyphen by the document's own usage, and the `line_break_hyphens` column says which (issue 51)."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from tests.conftest import CORPUS
from tests.support.structure_pages import parse_pages, quote_with
from warehouse import schemas

MAVIS = CORPUS / "docs" / "mavis-aaai2026.pdf"
DPR = CORPUS / "docs" / "dpr-emnlp2020.pdf"


def test_a_word_broken_by_the_typesetter_is_joined() -> None:
    # page 5: "... in terms of answer grounded-" / "ness, using two sub-metrics"; the page's heading
    # writes "Groundedness" whole
    quotes, _ = parse_pages(MAVIS, (5,))
    q = quote_with(quotes, 5, "citation quality in terms of answer groundedness, using two")
    assert "grounded-" not in q["text"]
    assert {"column": "text", "word": "groundedness", "hyphen_kept": False} in q["line_break_hyphens"]
    assert not any("-\n" in (r["text"] or "") for r in quotes if r["kind"] == "text")


def test_a_compound_the_document_writes_hyphenated_keeps_its_hyphen() -> None:
    # page 1: "... a simple dual-" / "encoder framework"; page 2 writes "dual-encoder" on one line.
    # Without page 2 nothing in the document says "dual-encoder", and the break reads as a
    # typesetter's: the same words, two readings, by the document's own usage.
    alone, _ = parse_pages(DPR, (1,))
    assert "dualencoder framework" in " ".join(quote_with(alone, 1, "dualencoder")["text"].split())
    quotes, _ = parse_pages(DPR, (1, 2))
    q = quote_with(quotes, 1, "a simple dual-encoder framework")
    assert {"column": "text", "word": "dual-encoder", "hyphen_kept": True} in q["line_break_hyphens"]
    # a DuckDB user finds the joins and the kept hyphens in SQL
    con = duckdb.connect()
    con.register("quotes", pa.Table.from_pylist(quotes, schema=schemas.QUOTES))
    kept = con.sql(
        "select b.word from (select unnest(line_break_hyphens) as b from quotes) where b.hyphen_kept"
    ).fetchall()
    assert ("dual-encoder",) in kept and ("open-domain",) in kept
