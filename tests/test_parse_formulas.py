"""A formula set on lines of its own is an equation quote, whatever box the layout model drew
around it; a heading, a legend or a label holding an operator is not (issue 51)."""

from __future__ import annotations

from tests.conftest import CORPUS
from tests.support.structure_pages import parse_pages, quote_with

DEV = CORPUS.parent / "benchmarks" / "mmlongbench-dev" / "pdfs"


def test_a_formula_set_apart_is_an_equation_and_a_heading_legend_or_label_is_not() -> None:
    # a paper's numbered display formulas, which the layout model boxed as paragraphs
    quotes, _ = parse_pages(DEV / "2303.08559v2.pdf", (3, 18))
    for page, needle in ((3, "PE,I,f(D, s) = [I; f(E(D, s)); f(s)]"), (18, "E(D, s) = arg-topKs′∈D[RD(s′, s)]")):
        q = quote_with(quotes, page, needle)
        assert q["kind"] == "equation" and q["img_path"], q  # cropped, as an equation quote is
        assert needle in q["text"]  # its text layer still indexed
    titles = {q["text"] for q in quotes if q["kind"] == "title"}
    assert {"3.2 Small Language Models", "E.3 Do More Samples in Demos Help?"} <= titles
    # a manual's code legend ("1 = Yes", "2 = No") and a heading naming a feature ("Set Device+")
    legend, _ = parse_pages(CORPUS / "scale" / "irs-manual-400p.pdf", (341,))
    assert {quote_with(legend, 341, text)["kind"] for text in ("1 = Yes", "2 = No")} == {"text"}
    labels, _ = parse_pages(DEV / "nova_y70.pdf", (11,))
    assert quote_with(labels, 11, "Set Device+")["kind"] == "title"
