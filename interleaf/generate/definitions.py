"""What a term means, where the document defines it: asked "how does the guide define a kettle
scale?", the answer is the sentence that follows the term set as a run-in heading ("Kettle scale.
Minerals the water leaves ...") or the sentence that opens with the term and a verb that defines
("A kettle scale is ...", "... refers to ..."). The fitted ranker prefers any sentence that repeats
the term; the defining one, after its run-in heading, need not repeat it at all.
Worth, on the MMLongBench-Doc dev half: one answerable question more right (of 234), no other verdict
moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.evidence import fold
from interleaf.generate.asking import Part, without_article
from interleaf.generate.offline_scoring import Scored

_ASKED = (
    re.compile(r"\bdefine[sd]?\s+(?P<term>[^?]+?)\s*(?:\?|$)", re.I),
    re.compile(r"\bdefinition\s+of\s+(?P<term>[^?]+?)\s*(?:\?|$)", re.I),
    re.compile(r"\bwhat\s+is\s+meant\s+by\s+(?P<term>[^?]+?)\s*(?:\?|$)", re.I),
)
_DEFINES = re.compile(r"^(?:is|are|means|refers\s+to|is\s+defined\s+as|are\s+defined\s+as)\b")


def term_asked(question: str) -> str | None:
    """The term a question asks the meaning of ("kettle scale"), folded, without its article; None
    for any other question."""
    for pattern in _ASKED:
        m = pattern.search(question)
        if m:
            return without_article(fold(m.group("term")).strip()) or None
    return None


def definition_sentence(part: Part, ranked: Sequence[Scored]) -> Scored | None:
    """The best-ranked sentence that defines the term the part asks about: the one after the term
    set as a run-in heading of its quote, or one opening with the term and a defining verb."""
    term = term_asked(part.text)
    if term is None:
        return None
    sentences = [s for s in ranked if s.unit.kind == "sentence"]
    at = {(id(s.unit.quote), s.unit.position): s for s in sentences}
    for s in sentences:
        text = without_article(fold(s.unit.text).strip())
        if text.rstrip(".:") == term:  # "Kettle scale." opens its paragraph: the next sentence says it
            following = at.get((id(s.unit.quote), s.unit.position + 1))
            if following is not None:
                return following
        elif text.startswith(term + " ") and _DEFINES.match(text[len(term) + 1 :]):
            return s
    return None
