"""How a thing is done to, where the document says it of the thing: asked "how does the harbour
master record late arrivals?", the answer is the sentence that opens with the thing and the verb
the question asks with, in the passive ("Late arrivals are recorded in the tide book ..."). The
fitted ranker weighs the question's names, and the actor's name ("the harbour master") is printed
all over the document that is about it, in sentences about anything else; the sentence about the
thing need not name the actor at all.
Worth, on the MMLongBench-Doc dev half: one answerable question more right (of 234), no other verdict
moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.evidence import fold
from interleaf.generate.asking import Part
from interleaf.generate.offline_scoring import Scored

_HOW = re.compile(r"^\s*how\s+(?:does|do|did|is|are|was|were|should|can|will|would)\b", re.I)
# a sentence's subject (up to five words, no clause break), be, perhaps an adverb, a participle in -ed
_PASSIVE = re.compile(
    r"^(?P<thing>[^\s,;:]+(?:\s+[^\s,;:]+){0,4}?)\s+(?:is|are|was|were)\s+(?:\w+ly\s+)?(?P<done>\w+ed)\b"
)
# an article, or the owner a report names its own things by ("Our inventories are recorded ...")
_DETERMINER = re.compile(r"^(?:the|a|an|our|its|their)\s+")


def _stems(participle: str) -> tuple[str, ...]:
    """The verbs a participle may be of: "recorded" -> record, "valued" -> value, "planned" -> plan."""
    base = participle[:-2]
    stems = [base, participle[:-1]]
    if len(base) > 2 and base[-1] == base[-2]:
        stems.append(base[:-1])
    if base.endswith("i"):  # "carried" -> carry
        stems.append(base[:-1] + "y")
    return tuple(stems)


def done_to(question: str, sentence: str) -> bool:
    """Whether `sentence` opens by saying, in the passive, the verb `question` asks "how" with, of
    the thing it asks it of: "how does X record late arrivals?" and "Late arrivals are recorded ..."."""
    if not _HOW.match(question):
        return False
    m = _PASSIVE.match(_DETERMINER.sub("", fold(sentence).strip()))
    if m is None:
        return False
    asked = fold(question)
    thing, done = re.escape(m.group("thing")), m.group("done")
    if re.search(rf"\b{thing}\s+(?:\w+ly\s+)?{done}\b", asked):  # "how are late arrivals recorded?"
        return True
    return any(
        re.search(rf"\b{re.escape(stem)}s?\s+(?:the\s+|its\s+|their\s+)?{thing}\b", asked) for stem in _stems(done)
    )


def how_done_sentence(part: Part, ranked: Sequence[Scored]) -> Scored | None:
    """The best-ranked sentence that says, of the thing the part asks how something is done to, that
    it is done and how; None where the part asks something else or no sentence does."""
    if not _HOW.match(part.text):
        return None
    return next((s for s in ranked if s.unit.kind == "sentence" and done_to(part.text, s.unit.text)), None)
