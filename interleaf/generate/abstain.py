"""Saying "the documents do not say": the one sentence the offline composer writes, and the forms
models write it in, recognised so that an abstention is data (`answers.answerable`,
`abstain_reason`) whichever generator wrote it.
"""

from __future__ import annotations

import re

from interleaf.generate.sentences import IMAGE_MARK, TEXT_MARK, split_sentences

# The canonical abstention, defined once: a whole answer or one part of a multi-part answer.
NOT_IN_DOCUMENTS = "The documents do not say"


def abstention(asked: str, why: str | None = None) -> str:
    """`The documents do not say what Norvane's closing stock price was: no quote mentions Norvane.`"""
    asked = asked.strip().rstrip("?.! ")
    asked = asked[:1].lower() + asked[1:] if asked[:2] != asked[:2].upper() else asked
    return f"{NOT_IN_DOCUMENTS} {asked}" + (f": {why}." if why else ".")


# How models say it (MMDocRAG's and our prompts ask for one sentence saying so). Each form names
# the documents/quotes/context or the asker's search, so "the drug does not say" is not one.
_SOURCE = r"(?:documents?|quotes?|context|texts?|passages?|sources?|excerpts?|images?|materials?|information|evidence)"
_FORMS = re.compile(
    "|".join(
        [
            rf"\b(?:the\s+)?(?:provided\s+|given\s+|available\s+)?{_SOURCE}\s+(?:do|does|did)\s+not\s+"
            r"(?:say|state|mention|contain|include|provide|give|specify|report|answer|address|cover|indicate|list|show)",
            rf"\b(?:the\s+)?(?:provided\s+|given\s+)?{_SOURCE}\s+(?:don't|doesn't|didn't)\s+\w+",
            rf"\bnot\s+(?:mentioned|stated|given|provided|specified|reported|found|available|included|covered|listed"
            rf"|addressed|discussed)\s+(?:in|by|within|anywhere\s+in)\s+(?:the\s+)?(?:provided\s+|given\s+)?{_SOURCE}",
            r"\bnot\s+found\s+in\s+the\s+documents?\b",
            r"\bI\s+(?:cannot|can't|could\s+not|couldn't|am\s+unable\s+to|was\s+unable\s+to)\s+(?:find|determine|"
            r"answer|locate|identify|tell)",
            r"\b(?:there\s+is|I\s+found|I\s+see)\s+no\s+(?:information|mention|data|evidence|figure|value)\b",
            rf"\bno\s+(?:information|mention|data|evidence)\s+(?:about|on|of|regarding|is\s+given)\b.*\b{_SOURCE}",
            rf"\b(?:cannot|can't|could\s+not)\s+be\s+(?:determined|found|answered|inferred)\s+from\s+(?:the\s+)?"
            rf"(?:provided\s+|given\s+)?{_SOURCE}",
            rf"\b(?:none\s+of\s+the|no)\s+{_SOURCE}\s+(?:say|says|state|states|mention|mentions|give|gives|provide"
            r"|provides|answer|answers|contain|contains)",
            r"\bnot\s+in\s+the\s+documents\b",
        ]
    ),
    re.I,
)


def says_missing(sentence: str) -> bool:
    """The sentence says the documents do not hold the answer (in any of the forms models use)."""
    return _FORMS.search(sentence) is not None


def abstains(markdown: str) -> str | None:
    """The sentence with which an answer as a whole says the documents do not answer, or None: it
    cites nothing and a sentence says so, or every sentence says so."""
    sentences = split_sentences(markdown)
    missing = [s for s in sentences if says_missing(s)]
    if not missing:
        return None
    cites = TEXT_MARK.search(markdown) or IMAGE_MARK.search(markdown)
    return missing[0] if not cites or len(missing) == len(sentences) else None
