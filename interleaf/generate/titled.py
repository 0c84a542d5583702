"""What a thing is titled, where the document prints the kind of thing, a dash or a colon, and the
title: asked "what is the title of the keynote given on day 2?", the answer is the sentence holding
"Keynote: Harbour Lights at Dusk" or "Opening Keynote - Harbour Lights at Dusk". The fitted ranker
weighs the question's other words ("day 2"), which a heading nearby holds and the titled line need
not; the line holds the kind of thing and then a capitalised title, which is what the question asks.
Numbered parts ("the title of Chapter 3") are part_titles.py's, read from the whole document; this
reads the ranked candidates only.
Worth, on the MMLongBench-Doc dev half: one answerable question more right (of 234), no other verdict
moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.generate.asking import Part, without_article
from interleaf.generate.offline_scoring import Scored

# "the title of (the) keynote given on day 2", "the name of the ferry in the photo?": the words up
# to a participle, a preposition or a clause
_ASKED = re.compile(
    r"\b(?:title|name)\s+of\s+(?P<thing>[^\W\d_][^\W\d_\s-]*(?:[\s-]+[^\W\d_][^\W\d_\s-]*){0,3}?)"
    r"(?=\s+(?:given|shown|listed|printed|mentioned|presented|in|on|under|at|for|from|of|that|which|as|by)\b"
    r"|\s*[?.,;:]|\s*$)",
    re.I,
)


def thing_asked(question: str) -> str | None:
    """The kind of thing a question asks the title or name of ("keynote"), lower case, without its
    article; None for any other question."""
    m = _ASKED.search(question)
    if m is None:
        return None
    thing = without_article(" ".join(m.group("thing").lower().replace("-", " ").split()))
    return thing if thing not in ("", "the", "a", "an") else None  # "the title of the of the ..."


def _title_after(text: str, thing: str) -> str | None:
    """The title the text prints after the thing (or its plural) and a dash or a colon, up to the
    next dash, stop or line end: "Keynote: Harbour Lights - day 2" gives "Harbour Lights"; None where
    no capitalised word follows the separator."""
    words = r"[\s-]+".join(map(re.escape, thing.split()))
    m = re.search(rf"(?<!\w)(?i:{words})s?\s*[-:\u2013\u2014]\s*(?P<title>[A-Z][^\n.;\u2013\u2014]*)", text)
    return re.split(r"\s+-\s+|-{2,}", m.group("title"))[0].strip() if m else None


def title_in(part: Part, text: str) -> str | None:
    """The title a candidate's text gives the kind of thing the part asks the title of; None where the
    part asks no title or the text gives none."""
    thing = thing_asked(part.text)
    return _title_after(text, thing) if thing else None


def titled_sentence(part: Part, ranked: Sequence[Scored]) -> Scored | None:
    """The best-ranked candidate that prints the kind of thing the part asks the title of, then its
    title (`_title_after`)."""
    thing = thing_asked(part.text)
    if thing is None:
        return None
    for s in ranked:
        if s.unit.kind in ("sentence", "block", "ocr") and _title_after(s.unit.text, thing):
            return s
    return None
