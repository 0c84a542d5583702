"""Who holds a role, where a page prints a name over the role it holds: a cover's or a letter's
signature block ("Ada Okafor" over "Chief Kettle Officer"), a court caption ("VIREO HOLDINGS,"
over "Claimant."). Asked "what is the name of the chief kettle officer?" or "who is the
claimant?", the name is the line above the one that reads the role and nothing else; the ranked
sentences around it rarely say it, and the name line alone restates nothing of the question, so the
fitted ranker puts it low. Only the context's quotes are read, and only those on the pages the
question names where it names any ("on the first page").
Worth, on the MMLongBench-Doc dev half: one answerable question more right (of 234), no other
verdict moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from interleaf.evidence import fold
from interleaf.generate.asking import Part
from interleaf.generate.offline_scoring import Scored

# "the name of the harbour master (as printed ...)", "who is the claimant (of this case)?"
_ASKED = re.compile(
    r"\b(?:names?\s+of\s+the|who\s+(?:is|was|are|were)\s+the)\s+(?P<role>[^\W\d_][\w\s-]*?)"
    r"(?=\s+(?:as|of|on|in|at|for|from|who|that|which|mentioned|named|listed|printed|shown|given|according)\b"
    r"|\s*[?.,;:]|\s*$)",
    re.I,
)
_NAME_WORD = re.compile(r"[A-Z][\w'’.-]*")
# the kinds of candidate a name line is read from: a figure's text, a sentence of a page's text
_READ = frozenset({"ocr", "block", "sentence"})


def role_asked(question: str) -> str | None:
    """The role a question asks the holder of ("harbour master"), folded; None for any other question."""
    m = _ASKED.search(question)
    return fold(m.group("role")) if m else None


def _reads_role(line: str, role: str) -> bool:
    """The line reads the role and nothing else ("HARBOUR MASTER", "Claimant.", "The Harbour Master")."""
    return re.sub(r"^the\s+", "", fold(line).strip(" .,;:")) == role


def _reads_name(line: str) -> bool:
    """A line that is a name: two to six words each opening with a capital ("Ada Okafor", "Ada N.
    Okafor, MD", "VIREO HOLDINGS,"), no number, not a heading ending in a colon."""
    words = line.strip().rstrip(",.").replace(",", " ").split()
    return (
        2 <= len(words) <= 6
        and all(_NAME_WORD.fullmatch(w) for w in words)
        and not any(c.isdigit() for c in line)
        and not line.strip().endswith(":")
    )


def name_by_role(part: Part, ranked: Sequence[Scored], pages: frozenset[tuple[str, int]]) -> Scored | None:
    """The best-ranked candidate that holds a name printed on the line above a line reading the
    role the part asks about, on the pages the question names (any page where it names none)."""
    role = role_asked(part.text)
    if not role:
        return None
    for s in ranked:
        u = s.unit
        q = u.quote
        if u.kind not in _READ or (pages and (q.doc_id, q.page_idx) not in pages):
            continue
        text = (q.ocr_text or q.text) if q.modality == "image" else q.text
        lines = [line.strip() for line in text.splitlines()]
        for above, line in itertools.pairwise(lines):
            if _reads_role(line, role) and _reads_name(above) and fold(above) in fold(u.text):
                return s
    return None
