"""Where a question points, as masks over real quotes of the IRS manual (pages 7-9 and 50-53)."""

from __future__ import annotations

import numpy as np

from interleaf.kinds import modality_of
from interleaf.structure.outline import read_outline
from interleaf.structure.references import label_line
from interleaf.structure.scopes import QuoteScopes
from interleaf.structure.sections import build_sections
from tests.support.structure_pages import IRS, doc_id_of, parse_pages, pdf_bytes, quote_with

PAGES = (7, 8, 9, 50, 51, 52, 53)


def _scopes() -> tuple[QuoteScopes, list[dict]]:
    quotes, page_rows = parse_pages(IRS, PAGES)
    rows, section_of = build_sections(
        doc_id_of(IRS), read_outline(pdf_bytes(IRS)), quotes, page_rows, "2.3.59 (Rev 12/22)"
    )
    scopes = QuoteScopes(
        [q["quote_id"] for q in quotes],
        [q["doc_id"] for q in quotes],
        [q["page_idx"] for q in quotes],
        [modality_of(q["kind"]) for q in quotes],
        [section_of[q["quote_id"]] for q in quotes],
        [label_line(q["kind"], q["caption"], q["text"]) for q in quotes],
        rows,
    )
    return scopes, quotes


def test_an_exhibit_reference_masks_the_exhibit_and_its_floats() -> None:
    scopes, quotes = _scopes()
    (scope,) = scopes.for_question("In IRM 2.3.59 Exhibit 2.3.59-14, what does the TC006 No Merge Code list?")
    assert (scope.text, scope.how) == ("Exhibit 2.3.59-14", "label")
    inside = {q["page_idx"] + 1 for q, m in zip(quotes, scope.mask, strict=True) if m}
    assert inside == {50, 51, 52, 53}  # the exhibit starts on page 50 and runs past 53
    row = quote_with(quotes, 53, "values 22-33 are entity no-merge")
    assert scope.mask[scopes.position[row["quote_id"]]]
    # page 50's screen image carries the exhibit's caption and is in scope
    screen = next(q for q in quotes if q["page_idx"] == 49 and q["kind"] == "figure")
    assert scope.mask[scopes.position[screen["quote_id"]]]
    # inside the exhibit the words of its path ("Exhibit 2.3.59-14 Command Code BMFOL Entity Display")
    # and of the manual's title ("2.3.59 (Rev 12/22)") are on every quote: dropped, as the stopwords are
    # in, what, does, the -> stopwords; 2.3.59, exhibit, 14, code -> shared; irm tc006 no merge list remain
    assert scope.query.split() == ["irm", "tc006", "no", "merge", "list"]


def test_a_section_number_masks_that_section_only() -> None:
    scopes, quotes = _scopes()
    (scope,) = scopes.for_question("What is the weekly cut-off time in IRM 2.3.59.5?")
    masked = [q for q, m in zip(quotes, scope.mask, strict=True) if m]
    assert quote_with(quotes, 9, "Weekly cut-off time for BMFOLB") in masked
    assert {q["page_idx"] + 1 for q in masked} == {9}


def test_no_reference_no_scope_and_doc_scope_filters() -> None:
    scopes, _ = _scopes()
    assert scopes.for_question("What does the command code display?") == []
    assert scopes.for_question("In Exhibit 2.3.59-14, which codes?", doc_id="another-document") == []
    assert np.count_nonzero(scopes.quote_mask(["no-such-quote"])) == 0


def test_each_quote_has_its_section_as_fusion_group() -> None:
    scopes, quotes = _scopes()
    row = quote_with(quotes, 53, "values 22-33 are entity no-merge")
    heading = quote_with(quotes, 53, "Exhibit 2.3.59-14 (Cont. 3)")
    cutoff = quote_with(quotes, 9, "Weekly cut-off time for BMFOLB")
    assert scopes.section_of[row["quote_id"]] == scopes.section_of[heading["quote_id"]]
    assert scopes.section_of[row["quote_id"]] != scopes.section_of[cutoff["quote_id"]]


def test_a_corpus_without_structure_has_no_scopes() -> None:
    scopes = QuoteScopes(["a", "b"], ["D", "D"], [0, 1], ["text", "image"], [], [], [])
    assert scopes.for_question("In Exhibit 2.3.59-14 and Table 2, what?") == []
    assert scopes.section_of == {"a": "a", "b": "b"}  # each quote a fusion group of its own
