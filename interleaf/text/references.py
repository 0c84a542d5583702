"""The one notion of a numbered reference: "Figure 3", "Fig. 3b", "Table IV", "Tableau 2", "图 1".

Three readers share it: the layout parser pairs a caption with its figure or table by the label the
caption starts with; the offline describer finds the sentences that mention a figure or table's
label; the query expander and the lexical reranker keep references in a question ("Table 5",
"Section 5.4") as whole cues.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Family = Literal["figure", "table", "listing", "example"]

# The words that name a float, by family, as regular expressions (plurals included: "Figures 2 and
# 3", "Tables 1-2"); matched case-insensitively.
FAMILY_WORDS: dict[Family, tuple[str, ...]] = {
    "figure": (
        r"fig(?:ure)?s?",
        r"charts?",
        r"graphs?",
        r"exhibits?",
        r"plates?",
        r"figuras?",
        r"abb(?:ildung)?(?:en)?",
        "그림",
        "图",
    ),
    "table": (r"tableaux?", r"tablas?", r"tab(?:le)?s?", "표", "表"),
    "listing": (r"listings?",),
    "example": (r"examples?",),
}
# Numbered parts of a document a question may point at besides floats.
PART_WORDS = (r"sections?", r"sec", r"chapters?", r"appendix", r"appendices", r"eqs?", r"equations?", r"pages?")

# "3", "3b", "2-2" (chapter-numbered, as in manuals), "5.4", "IV"
NUMBER = r"(?:[0-9]+[a-z]?(?:[.\-–][0-9]+)*|[IVX]+)"
# A number is whole when no digit, letter or further ".N" / "-N" follows: "Table 5" is not in
# "Table 50", "Table 5.1" or "Table 5-1".
_NUMBER_END = r"(?![0-9A-Za-z]|[.\-–][0-9])"


def _words(words: tuple[str, ...]) -> str:
    return "|".join(words)


_FAMILY_OF_WORD = [(family, re.compile(rf"^(?:{_words(words)})$", re.I)) for family, words in FAMILY_WORDS.items()]
_ALL_FLOAT_WORDS = _words(tuple(w for words in FAMILY_WORDS.values() for w in words))
_CAPTION = re.compile(rf"^\s*(?P<word>{_ALL_FLOAT_WORDS})\.?\s*(?P<num>{NUMBER}){_NUMBER_END}", re.I)
REFERENCE = re.compile(rf"\b(?:{_ALL_FLOAT_WORDS}|{_words(PART_WORDS)})\.?\s*{NUMBER}{_NUMBER_END}", re.I)


@dataclass(frozen=True)
class Label:
    """What a caption calls its float: a family and a number ("table", "2")."""

    family: Family
    number: str

    def mentions(self) -> re.Pattern[str]:
        """Mentions of this label in running text: "Figure 3", "Fig. 3", "figs. 3", "Figure 3a"
        (a panel of it), never "Figure 30" or "Figure 3.2"."""
        words = _words(FAMILY_WORDS[self.family])
        number = re.escape(self.number)
        return re.compile(rf"(?<![^\W\d_])(?:{words})\.?\s*{number}(?![0-9]|[.\-–][0-9])", re.I)


def caption_label(text: str | None) -> Label | None:
    """The label a caption starts with ("Figure 3: ...", "Table IV.", "Tableau 2 -", "图 1"), or None."""
    match = _CAPTION.match(text or "")
    if not match:
        return None
    word = match.group("word")
    family = next(f for f, pattern in _FAMILY_OF_WORD if pattern.match(word))
    return Label(family, match.group("num").lower())


def is_reference(text: str) -> bool:
    """True when the whole text is one numbered reference ("Table 5", "Section 5.4", "Fig. 2")."""
    return REFERENCE.fullmatch(text.strip()) is not None
