"""Where within its documents a question is asked: the quotes it may retrieve (its documents'),
and the sections, items and pages it names, each searched on its own (one more ranked list per
reference) and, for pages, put first in the ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from interleaf.evidence import fold
from interleaf.expand.instructions import without_instructions
from interleaf.expand.protocol import Clause
from interleaf.retrieve.config import RetrieveConfig
from interleaf.retrieve.loaded_index import LoadedIndex
from interleaf.structure.pages import PageReference, page_references, pages_named
from interleaf.structure.references import quoted_phrases

SCOPED = "scope:"  # the kind of a clause asked within a section or item the question names
# the most words of a quoted phrase read as a term: on qa_dev, a quoted three-word diagram title listed
# the quotes of its heading and pushed the diagram out of the context (recall@5 0.915 -> 0.894 in
# document scope); one word moves none of the corpus dev sets' figures (set by reading, not fitted)
_TERM_WORDS = 1
# the most quotes that may print a term for it to point somewhere ("good", quoted, is printed
# everywhere); set by reading, not fitted: of the dev half's quoted one-word terms, a table's label
# is printed by one quote, "good", "bad" and "unfavorable" by 7 to 16
_TERM_QUOTES = 5


def scope_mask(index: LoadedIndex, doc_ids: tuple[str, ...]) -> np.ndarray:
    """The quotes a question may retrieve: its documents', or every quote when it names none."""
    if not doc_ids:
        return index.doc_mask(None)
    return np.logical_or.reduce([index.doc_mask(d) for d in doc_ids])


def reference_scopes(
    index: LoadedIndex,
    text: str,
    doc_ids: tuple[str, ...],
    mask: np.ndarray,
    doc_scoped: bool,
    config: RetrieveConfig,
    named_pages: Sequence[tuple[PageReference, np.ndarray]] = (),
) -> list[tuple[Clause, np.ndarray]]:
    """The question (`text`, asked of `doc_ids`) again, asked only among the quotes of each section
    or item it names ("Exhibit 4-12", "section 4.2", a title it quotes) and, in document scope, of
    each page it names (`named_pages`, from `named_page_masks`), and among the few quotes printing a
    one-word term it quotes (`quoted_terms`): one more ranked list per reference."""
    if config.reference_weight <= 0:
        return []
    # a heading repeating the document's title names the document: within one document, nothing narrower
    doc_id = doc_ids[0] if doc_scoped and len(doc_ids) == 1 else None
    out = []
    for scope in index.scopes.for_question(text, doc_id, config.scoped_query, config.item_references):
        within = mask & scope.mask
        if within.any():
            out.append((Clause(scope.query, f"{SCOPED}{scope.text}", config.reference_weight), within))
    for reference, within in named_pages:
        if within.any():
            out.append((Clause(text, f"{SCOPED}{reference.text}", config.reference_weight), within))
    if config.quoted_terms:
        listed = {fold(c.kind.removeprefix(SCOPED)) for c, _ in out}
        # a term or a label, not a sentence or a title quoted whole; not the examples of how to
        # write the answer ('formatted as "YYYY-MM-DD"')
        for phrase in (p for p in quoted_phrases(without_instructions(text)) if len(p.split()) <= _TERM_WORDS):
            within = printing(index, phrase, mask)
            if fold(phrase) not in listed and 0 < within.sum() <= _TERM_QUOTES:
                out.append((Clause(text, f"{SCOPED}“{phrase}”", config.reference_weight), within))
    return out


def printing(index: LoadedIndex, phrase: str, mask: np.ndarray) -> np.ndarray:
    """The quotes within `mask` whose text prints the phrase (folded: case and spacing aside)."""
    wanted = fold(phrase)
    out = np.zeros_like(mask)
    for i in np.flatnonzero(mask):
        out[i] = wanted in fold(index.corpus.texts[i])
    return out


def named_page_masks(
    index: LoadedIndex,
    text: str,
    doc_ids: tuple[str, ...],
    mask: np.ndarray,
    printed: Mapping[str, Mapping[int, set[int]]] | None,
) -> list[tuple[PageReference, np.ndarray]]:
    """Each page reference of the question (`text`, asked of `doc_ids`), with the quotes within
    `mask` on the pages of its documents that it names ("the chart on page 14": the file's 14th page
    and the page printed "14", `printed`)."""
    out = []
    for reference in page_references(text):
        within = np.zeros_like(mask)
        for doc in doc_ids:
            in_doc = mask & index.doc_mask(doc)
            pages = pages_named(reference, set(index.page_array[in_doc].tolist()), (printed or {}).get(doc, {}))
            within |= in_doc & np.isin(index.page_array, list(pages))
        out.append((reference, within))
    return out


def named_pages_first(
    index: LoadedIndex, ranking: list[tuple[str, float]], named: np.ndarray
) -> list[tuple[str, float]]:
    """The ranking with the quotes `named` (on the pages the question names) ahead of the rest, each
    part in its order: a question that names a page is answered there, whatever words its evidence
    uses ("Which year is printed on the third page?"), and a reranker reading words alone would
    sink it."""
    if not named.any():
        return ranking
    pos = index.position
    rest = [item for item in ranking if not named[pos[item[0]]]]
    # their scores raised above every other quote's: a context read by score keeps them first
    # (generate.quote_order: relevance)
    lowest = min((s for q, s in ranking if named[pos[q]]), default=0.0)
    lift = max(max((s for _, s in rest), default=0.0) - lowest, 0.0) + 1.0
    return [(q, s + lift) for q, s in ranking if named[pos[q]]] + rest
