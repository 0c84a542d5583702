"""Abbreviations a document defines ("CityQuests (CQ)", "remote sensing imagery (RSI)"), so
that a question's words find a table's labels: a question saying the long form is also read with
the short one, and the other way round.

The definitions are found as Schwartz and Hearst (2003) find them: a parenthesised short form of 2
to 10 characters, starting with a letter, and the shortest run of the words before it, at most
min(|SF| + 5, 2 |SF|) words, whose letters hold the short form's letters in order, the first letter
of the short form starting a word; or the one word before it, when that word holds the short form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SHORT = re.compile(r"\(\s*([A-Za-z][A-Za-z0-9.\-]{1,9})\s*\)")
_WORD = re.compile(r"[\w][\w'’\-]*")


def defined_abbreviations(texts: Iterable[str]) -> dict[str, str]:
    """short form -> long form, for every definition in the texts (the first one found wins)."""
    out: dict[str, str] = {}
    for text in texts:
        for m in _SHORT.finditer(text or ""):
            short = m.group(1).strip(".")
            if short in out or not any(c.isupper() for c in short) or short.isdigit():
                continue
            words = _WORD.findall(text[: m.start()])
            limit = min(len(short) + 5, 2 * len(short))
            long = _long_form(short, words[-limit:])
            if long:
                out[short] = long
    return out


def _long_form(short: str, words: list[str]) -> str | None:
    """The shortest tail of `words` whose letters hold `short`'s letters in order (Schwartz-Hearst)."""
    letters = [c.lower() for c in short if c.isalnum()]
    for start in range(len(words) - 1, -1, -1):
        candidate = " ".join(words[start:])
        if candidate.lower() == short.lower():
            return None
        if start == len(words) - 1 and short.lower() in candidate.lower():
            return candidate  # one word that holds it: "ArchivedFAQ (FAQ)"
        if _matches(letters, candidate.lower()) and candidate[0].lower() == letters[0]:
            return candidate if len(candidate) > len(short) else None
    return None


def _matches(letters: list[str], long: str) -> bool:
    i = len(long) - 1
    for c in reversed(letters):
        while i >= 0 and long[i] != c:
            i -= 1
        if i < 0:
            return False
        i -= 1
    return True


def with_abbreviations(question: str, abbreviations: dict[str, str]) -> str:
    """The question with the other form of each defined abbreviation it uses appended."""
    folded = question.casefold()
    extra = []
    for short, long in abbreviations.items():
        has_short = re.search(rf"(?<![\w-]){re.escape(short)}(?![\w-])", question) is not None
        has_long = long.casefold() in folded
        if has_long and not has_short:
            extra.append(short)
        elif has_short and not has_long:
            extra.append(long)
    return f"{question} ({'; '.join(extra)})" if extra else question
