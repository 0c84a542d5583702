"""The offline default reranker: no model, exact evidence cues.

Questions over documents name the thing the evidence carries verbatim: a number ("53.7"), a
"Table 5" reference, an acronym, a quoted phrase. A passage that contains them, whole, is more
likely the evidence than one that is merely about the same topic. Scores are the weighted share of
the question's anchors found in the passage, plus a small term-overlap share.

A cue counts by how few of the passages hold it (BM25's idf over the passages ranked, relative to a
cue held by one): the company a 10-K is about or the subject a brochure names on every page is
found in half the passages and tells them apart little, while "Table 5" or "53.7" is found in one.
Worth, against every cue counting alike: page recall@5 on the dev half and qa_dev rises (`make
fit-retrieval`, docs/measured/retrieval-fit.md), and so do the offline answers right on the dev half.
"""

from __future__ import annotations

import math
import re

from interleaf.evidence import fold
from interleaf.expand.rules import anchors
from interleaf.text.references import is_reference
from interleaf.text.tokens import tokenize


class LexicalReranker:
    name = "lexical"

    def score(self, query: str, passages: list[str]) -> list[float]:
        named = anchors(query)
        cues = [fold(c) for c in named]
        weights = [2.0 if is_reference(c) else 1.0 for c in named]
        terms = set(tokenize(query))
        texts = [fold(p) for p in passages]
        found = [[_contains(text, c) for c in cues] for text in texts]
        rarity = [_rarity(sum(f[i] for f in found), len(passages)) for i in range(len(cues))]
        out = []
        for passage, holds in zip(passages, found, strict=True):
            hit = sum(w * r for w, r, h in zip(weights, rarity, holds, strict=True) if h)
            cue_share = hit / sum(weights) if weights else 0.0
            words = set(tokenize(passage))
            overlap = len(terms & words) / len(terms) if terms else 0.0
            out.append(0.7 * cue_share + 0.3 * overlap)
        return out


def _rarity(held_by: int, passages: int) -> float:
    """BM25's idf of a cue held by `held_by` of the passages, over the idf of one held by a single one."""

    def idf(n: int) -> float:
        return math.log(1 + (passages - n + 0.5) / (n + 0.5))

    return idf(max(held_by, 1)) / idf(1)


def _contains(text: str, cue: str) -> bool:
    # whole-token match: "5" must not match "15", nor "Table 5" match "Table 50", "Table 5.1" or "Table 5-1"
    return re.search(rf"(?<![\w.]){re.escape(cue)}(?![\w]|[.\-–]\d)", text) is not None
