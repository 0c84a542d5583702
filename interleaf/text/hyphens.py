"""Words a typesetter broke across two lines with a hyphen, made whole again by the document's own
usage.

A hyphen at a line's end is one of two things: a break the typesetter made inside a word ("infor-" /
"mation"), to be joined, or the hyphen of a compound that happens to fall at the line's end ("multi-"
/ "modal"), to be kept. The text alone cannot tell them apart; the rest of the document can, so it
decides, in this order:
- the joined word is written elsewhere in the document ("information"): joined;
- the hyphenated one is, and the joined one is not ("multi-modal"): the hyphen is kept;
- neither, but both halves are words the document writes on their own ("rule" / "based"): a
  compound of two words, the hyphen is kept;
- none of these: joined, as most breaks are the typesetter's ("hyphen-" / "ation").
Whatever the choice, the line break goes: the word is whole on the first line, so no retriever
sees two halves.

Some breaks need no vocabulary, by how hyphenation works (it breaks a word of lower-case letters,
never one that already holds a hyphen): a continuation in capitals or digits ("Query-" / "Fusion",
"Model-" / "7"), a first part ending in a digit ("2-" / "layer") and a word holding another hyphen
("state-of-the-" / "art", "state-" / "of-the-art") keep the hyphen; a soft hyphen (U+00AD) is the
typesetter's by definition and is joined. A continuation in a script without capitals is left as
printed: nothing says whether it continues a word.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

SOFT_HYPHEN = "\u00ad"
_JOINERS = "-\u2010"  # a hyphen inside a word: ASCII's and Unicode's HYPHEN
# A word as the document writes it: letters and digits, parts joined by hyphens ("multi-modal").
_TOKEN = re.compile(r"[^\W_]+(?:[-\u2010][^\W_]+)*")
# A word's first part and its hyphen at a line's end; on the next line the continuation, the rest of
# a hyphenated word, what sticks to it (punctuation), then more of that line or its end.
_BREAK = re.compile(
    r"(?<![\w\-\u2010])(?P<left>[^\W_]+(?:[-\u2010][^\W_]+)*)(?P<hyphen>[-\u2010\u00ad])[ \t]*\n[ \t]*"
    r"(?P<right>[^\W_]+)(?P<rest>(?:[-\u2010][^\W_]+)*)(?P<tail>\S*)(?:(?P<more>[ \t]+)(?=\S)|[ \t]*(?=\n|$))"
)
# A half shorter than this is not taken for a word of its own: two-letter words ("or", "in", "to")
# are also common syllables, so a typesetter's break often leaves one ("direct-" / "or").
MIN_HALF_LETTERS = 3


@dataclass(frozen=True)
class BrokenWord:
    """A word printed across a line break with a hyphen: as stored, and whether the hyphen stayed."""

    word: str
    hyphen_kept: bool


def vocabulary(texts: Iterable[str | None]) -> Counter[str]:
    """How often a document writes each word (case folded), hyphenated ones whole. Words broken at a
    line's end are left out, so a break never votes for its own reading."""
    counts: Counter[str] = Counter()
    for text in texts:
        if text:
            counts.update(t.casefold() for t in _TOKEN.findall(_BREAK.sub(" ", text)))
    return counts


def keeps_hyphen(left: str, hyphen: str, right: str, rest: str, words: Counter[str]) -> bool | None:
    """True: a compound's hyphen; False: a typesetter's break, joined; None: neither can be said,
    the text stays as printed. `right` is the continuation's first part, `rest` any hyphenated
    parts after it."""
    if hyphen == SOFT_HYPHEN:
        return False
    if right[0].isupper() or right[0].isdigit():
        return True
    if not right[0].islower():
        return None
    if not left[-1].isalpha() or rest or any(j in left for j in _JOINERS):
        return True
    if words[(left + right).casefold()]:
        return False
    if words[f"{left}-{right}".casefold()]:
        return True
    halves = (left, right)
    return all(len(h) >= MIN_HALF_LETTERS and words[h.casefold()] for h in halves)


def join_broken_words(text: str, words: Counter[str]) -> tuple[str, list[BrokenWord]]:
    """The text with each word broken across lines by a hyphen made whole on its first line, and the
    words so mended, in order."""
    mended: list[BrokenWord] = []

    def mend(m: re.Match[str]) -> str:
        left, hyphen, right, rest = m["left"], m["hyphen"], m["right"], m["rest"]
        kept = keeps_hyphen(left, hyphen, right, rest, words)
        if kept is None:
            return m[0]
        word = (left + hyphen + right if kept else left + right) + rest
        mended.append(BrokenWord(word, kept))
        # what followed the word on the second line, if anything, keeps a line of its own
        return word + m["tail"] + ("\n" if m["more"] else "")

    return _BREAK.sub(mend, text), mended
