"""Questions that count the steps of a procedure the document numbers: "How many steps are needed to
descale the kettle?", "Which has more steps, to descale the kettle or to fit the spout?".

A procedure (procedures.py: "To descale the kettle:" and the lines numbered 1., 2., ... after it)
answers a question when every content word of its lead is one of the question's: "to empty the
kettle" is not "to descale the kettle". Read from the context's quotes, best-ranked first; the
answer names the procedure with its step count and the page, and cites it.

Guidebooks and manuals number their procedures so, and a ranked sentence gives one step, never
their count. Worth, on the dev half: two more answerable questions right (a procedure's step count,
and which of two procedures has more steps); the corpus dev sets' answers do not move.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interleaf.generate.citations import image_alt
from interleaf.generate.procedures import Procedure, procedures
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.sentences import content_words

_HOW_MANY = re.compile(r"\bhow\s+many\s+steps\b|\bnumber\s+of\s+steps\b", re.I)
_MORE = re.compile(r"\b(?P<way>more|fewer|less)\s+steps\b", re.I)


def asks_steps(question: str) -> bool:
    return bool(_HOW_MANY.search(question) or _MORE.search(question))


def step_answer(question: str, quotes: Sequence[ContextQuote]) -> tuple[str, str] | None:
    """The answer and its short answer (the count, or the procedure with more or fewer steps), or
    None where the question counts no steps or no procedure of the context is the one it names."""
    if not asks_steps(question):
        return None
    asked = set(content_words(question))
    found: dict[str, Procedure] = {}
    for q in quotes:  # best-ranked first: a lead printed twice is read where it ranks best
        for p in procedures(q):
            words = set(content_words(p.lead))
            if words and words <= asked:
                found.setdefault(" ".join(sorted(words)), p)
    named = list(found.values())
    more = _MORE.search(question)
    if more and len(named) == 2:
        pick = max if more.group("way").lower() == "more" else min
        counts = [p.steps for p in named]
        if counts[0] == counts[1]:
            return None
        chosen = pick(named, key=lambda p: p.steps)
        other = next(p for p in named if p is not chosen)
        text = f"{_said(chosen)}; {_said(other, lower=True)}."
        distinct = [w for w in chosen.lead.split()[1:] if w.lower() not in other.lead.lower().split()]
        return f"{text}{_placed(named)}", " ".join(distinct) or chosen.lead
    if _HOW_MANY.search(question) and len(named) == 1:
        (p,) = named
        return f"{_said(p)}.{_placed(named)}", str(p.steps)
    return None


def _said(p: Procedure, lower: bool = False) -> str:
    lead = p.lead[0].lower() + p.lead[1:] if lower else p.lead
    cite = f" [{p.quote.number}]" if p.quote.modality == "text" else ""
    noun = "step" if p.steps == 1 else "steps"
    return f"{lead} takes {p.steps} numbered {noun} (page {p.quote.page_idx + 1}){cite}"


def _placed(named: Sequence[Procedure]) -> str:
    images = dict.fromkeys(p.quote for p in named if p.quote.modality == "image")
    return "".join(f" ![{image_alt(q)}](image{q.number})" for q in images)
