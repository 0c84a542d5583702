"""A question's format instructions: the sentences after its first that say how to write the answer
("Please write the answer in int format.", "Answer in million.", "Round your answer to three
decimal places", "Directly answer 'yes' or 'no'."), asking nothing of their own.

The expander leaves them out of the clauses it searches with (their words are in no evidence), and
the composer out of the parts it answers; what they say of the answer's kind (a number) is kept.
"""

from __future__ import annotations

import re

# a question's sentences: after "?" or ";", then a space or a capital straight after it
# ("... on the map?Please write ...")
_SENTENCE_BREAK = re.compile(r"(?<=[?;])(?:\s+|(?=[A-Z]))")
# where an instruction may start too: after "." then a space and a capital ("... the pump. Your
# answer should be formatted as ...")
_STATEMENT_BREAK = re.compile(r"(?<=\.)\s+(?=[A-Z])")
_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:(?:directly\s+)?answer|write|give|return|round|represent|list|format|save|express|report"
    r"|provide|(?:your|the)\s+(?:answer|report|response))\w*\b"  # \w*: a typo that runs on ("answerr")
    r"|^for\s+(?:example|instance)\b",  # an example of the answer's form: "For example: 1907 Mar.4"
    re.I,
)
# an example of the answer's form: quoted, bracketed, or the word after "e.g."; a sentence that is one
_EXAMPLE = re.compile(r"\[[^\]]*\]|[\"“'‘][^\"”'’]*[\"”'’]|\be\.g\.,?\s*[^\s,;]+", re.I)
_FOR_EXAMPLE = re.compile(r"^\s*for\s+(?:example|instance)\b", re.I)
_YEAR = re.compile(r"(?<![\w.])(?:1[5-9]|20)\d\d(?![\w.]\d)")
_ASKS = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
_QUOTED = re.compile(r"[\"“'‘][^\"”'’]*[\"”'’]")
# ... and says the answer is a number: "in int format", "a rounded integer", "in million", "to three decimal"
_NUMBER = re.compile(r"\b(?:int|integer|floa?t|decimals?|numbers?|million|billion|thousand|percent|percentage)\b", re.I)


def is_instruction(sentence: str) -> bool:
    """A sentence that says how to write the answer and asks nothing (no wh-word outside quotes)."""
    sentence = sentence.strip()
    return _INSTRUCTION.match(sentence) is not None and _ASKS.search(_QUOTED.sub(" ", sentence)) is None


def sentences(question: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_BREAK.split(question) if s.strip()]


def _statements(question: str) -> list[str]:
    """The question's sentences, split at full stops too."""
    return [p.strip() for s in sentences(question) for p in _STATEMENT_BREAK.split(s) if p.strip()]


def without_instructions(question: str) -> str:
    """The question without the instructions after its first sentence."""
    kept = _statements(question)
    return " ".join(kept[:1] + [s for s in kept[1:] if not is_instruction(s)]) if kept else question


def instructions(question: str) -> list[str]:
    """The question's format instructions: its sentences after the first that say how to write the answer."""
    return [s for s in _statements(question)[1:] if is_instruction(s)]


def told_years(question: str) -> list[str]:
    """The years an instruction gives outside its examples (quoted, bracketed): "Please write the
    answer as a list, e.g., ["12%","7%"], in the survey of March 3-April 20, 2016" still dates
    what is asked. Worth, on the dev half: one unanswerable question refused (a survey's year
    changed), its answerable twin not; no other question's instruction gives a year."""
    told = " ".join(_EXAMPLE.sub(" ", s) for s in instructions(question) if not _FOR_EXAMPLE.match(s))
    return _YEAR.findall(told)


def instructs_number(question: str) -> bool:
    """The question's instructions say the answer is a number ("Give me an integer.")."""
    return any(is_instruction(s) and _NUMBER.search(s) for s in _statements(question)[1:])


# The words that ask for a quantity; one pattern for retrieval's number lift, the offline composer's
# wants and its features.
_ASKS_QUANTITY = re.compile(
    r"\b(?:how\s+(?:many|much|long|old|far|often|large|big|high|low|fast|tall|wide|heavy)|combien"
    r"|what\s+(?:percentage|percent|share|proportion|number|amount|fraction|ratio|rate))\b",
    re.I,
)


def asks_quantity(text: str) -> bool:
    """The text asks for a quantity by its words ("how many", "what percentage")."""
    return _ASKS_QUANTITY.search(text) is not None


def wants_quantity(question: str) -> bool:
    """The question asks for a quantity, by its words ("how many") or by its instructions ("Answer
    in million.")."""
    return asks_quantity(question) or instructs_number(question)
