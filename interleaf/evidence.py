"""Matching gold evidence to quotes, as the corpus README defines it: same document and page,
and the needle inside the quote's text, case-insensitive with white space folded."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPACE = re.compile(r"\s+")


def fold(text: str | None) -> str:
    return _SPACE.sub(" ", (text or "")).strip().casefold()


def contains_needle(texts: Iterable[str | None], needle: str) -> bool:
    wanted = fold(needle)
    return any(wanted in fold(t) for t in texts if t)
