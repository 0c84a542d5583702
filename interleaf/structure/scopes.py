"""Where a question points, as masks over the loaded quotes.

The retrieve stage asks the question a second time inside each section or item the question names
(`references.py`): one more ranked list per reference, fused with the others. This module turns
resolved references into boolean masks over the quotes in load order, and gives each quote its
section as a fusion group (`interleaf.retrieve.fusion.page_fusion` one level up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from interleaf.evidence import fold
from interleaf.structure.references import SectionResolver, item_labels, resolve_items


@dataclass(frozen=True)
class Scope:
    text: str  # the question's words that point: "Exhibit 7.4.12-14", "the glass orchard", "Table 2-2"
    how: str  # label, label-prefix, title, title-series, title-part, item
    query: str  # what to ask inside the scope
    mask: np.ndarray  # bool over the loaded quotes


class QuoteScopes:
    """Precomputed once per loaded index: sections, their quotes and pages, captioned items."""

    def __init__(
        self,
        quote_ids: Sequence[str],
        doc_ids: Sequence[str],
        page_idx: Sequence[int],
        modalities: Sequence[str],
        section_ids: Sequence[str | None],
        label_lines: Sequence[str | None],  # references.label_line of each quote: "Table 2-2 ..." or None
        sections: Sequence[dict[str, Any]],
    ) -> None:
        self.n = len(quote_ids)
        # a corpus built without structure (an old warehouse, a test's hand-made corpus) has none
        section_ids = section_ids or [None] * self.n
        label_lines = label_lines or [None] * self.n
        self.resolver = SectionResolver(sections)
        self.position = {q: i for i, q in enumerate(quote_ids)}
        self._section_ids = np.asarray([s or "" for s in section_ids], dtype=object)
        self.section_of = {q: (s or q) for q, s in zip(quote_ids, section_ids, strict=True)}  # no section: alone
        self._images_on: dict[tuple[str, int], list[int]] = {}
        for i, (d, p, m) in enumerate(zip(doc_ids, page_idx, modalities, strict=True)):
            if m == "image":
                self._images_on.setdefault((d, p), []).append(i)
        self.labels = item_labels((q, "", line, None) for q, line in zip(quote_ids, label_lines, strict=True))
        self._doc_ids = np.asarray(doc_ids, dtype=object)

    def section_mask(self, section_ids: Sequence[str]) -> np.ndarray:
        """The quotes in these sections, and the image quotes on their pages (figures float)."""
        mask = np.isin(self._section_ids, list(section_ids))
        for page in self.resolver.pages(section_ids):
            mask[self._images_on.get(page, [])] = True
        return mask

    def quote_mask(self, quote_ids: Sequence[str]) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        mask[[self.position[q] for q in quote_ids if q in self.position]] = True
        return mask

    def for_question(
        self, question: str, doc_id: str | None = None, scoped_query: bool = True, items: bool = True
    ) -> list[Scope]:
        """Every scope a question names; `doc_id`: a doc-scoped question's document (None: corpus)."""
        out = []
        for ref in self.resolver.resolve(question, [doc_id] if doc_id is not None else None):
            query = self.resolver.scoped_query(question, ref.section_ids) if scoped_query else question
            out.append(Scope(ref.text, ref.how, query.strip(), self.section_mask(ref.section_ids)))
        if items:
            named = {fold(s.text) for s in out}
            for item in resolve_items(question, self.labels):
                mask = self.quote_mask(item.quote_ids)
                if doc_id is not None:
                    mask &= self._doc_ids == doc_id
                # "Exhibit 7.4.12-14" names a section and its screen image alike: the section holds both
                if fold(item.text) not in named and mask.any():
                    out.append(Scope(item.text, "item", question.strip(), mask))
        return out
