"""The offline default reranker: no model, exact evidence cues.

Questions over documents name the thing the evidence carries verbatim: a number ("53.7"), a
"Table 5" reference, an acronym, a quoted phrase. A passage that contains them, whole, is more
likely the evidence than one that is merely about the same topic. Scores are the weighted share of
the question's anchors found in the passage, plus a small term-overlap share.
"""

from __future__ import annotations

import re

from interleaf.evidence import fold
from interleaf.expand.rules import anchors
from interleaf.text.references import is_reference
from interleaf.text.tokens import tokenize


class LexicalReranker:
    name = "lexical"

    def score(self, query: str, passages: list[str]) -> list[float]:
        cues = anchors(query)
        weights = [2.0 if is_reference(c) else 1.0 for c in cues]
        terms = set(tokenize(query))
        out = []
        for passage in passages:
            text = fold(passage)
            hit = sum(w for c, w in zip(cues, weights, strict=True) if _contains(text, fold(c)))
            cue_share = hit / sum(weights) if weights else 0.0
            words = set(tokenize(passage))
            overlap = len(terms & words) / len(terms) if terms else 0.0
            out.append(0.7 * cue_share + 0.3 * overlap)
        return out


def _contains(text: str, cue: str) -> bool:
    # whole-token match: "5" must not match "15", nor "Table 5" match "Table 50", "Table 5.1" or "Table 5-1"
    return re.search(rf"(?<![\w.]){re.escape(cue)}(?![\w]|[.\-–]\d)", text) is not None
