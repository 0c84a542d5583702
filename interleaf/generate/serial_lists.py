"""A question that asks one thing of each item of a list: "the share of adults, retirees, and
students who ...", "the percentage of them who rent, own a flat, or own a house".

A serial list is three or more items with commas between them and "and" or "or" before the last
("A, B, and C"; "A, B and C"). The items between the commas are delimited by them; the first and the
last are not: each takes as many words as the longest delimited item, from the comma back and from
the conjunction on, and stops before a word that starts no item (a preposition, an article, a
wh-word). The parts it gives, one per item, are read apart by the composer: each finds its own
sentence or cell. Worth, on the dev half: one more answerable question right, by the benchmark's
rules and with the gold value in the answer (three groups' shares asked in one question); the corpus
dev sets' answers do not move.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_WORD = re.compile(r"\S+")
_CLOSING = ",?;:"
# a delimited item longer than this is a clause, not an item of a list (set by reading the dev sets'
# questions, not fitted: their lists' items are of one to three words)
_MAX_ITEM_WORDS = 4
_CONJUNCTIONS = ("and", "or")


@dataclass(frozen=True)
class SerialList:
    start: int  # the list's span in the text: from its first item's first word
    end: int  # to its last item's last word
    items: tuple[str, ...]

    def each(self, text: str) -> list[str]:
        """The text once per item, the list replaced by that item."""
        return [f"{text[: self.start]}{item}{text[self.end :]}" for item in self.items]


def serial_list(text: str, not_items: Collection[str]) -> SerialList | None:
    """The first serial list of `text` whose items all hold a letter; `not_items`: folded words an
    item neither starts nor ends with (prepositions, articles, wh-words, copulas)."""
    words = list(_WORD.finditer(text))
    for k, conjunction in enumerate(words):
        if conjunction.group(0).casefold() not in _CONJUNCTIONS or k == 0:
            continue
        found = _list_before(text, words, k, not_items)
        if found is not None:
            return found
    return None


def _list_before(text: str, words: list[re.Match[str]], k: int, not_items: Collection[str]) -> SerialList | None:
    # the delimited items, walking back from the conjunction at word k: each ends at word j (with its
    # comma, or, without a serial comma, just before the conjunction) and starts after a comma
    delimited: list[tuple[int, int]] = []  # word index ranges [i, j + 1)
    j = k - 1
    while (i := _after_comma(words, j)) is not None and _item(words[i : j + 1], not_items):
        delimited.append((i, j + 1))
        j = i - 1  # the comma-ended word that ends the item before
    serial_comma = words[k - 1].group(0).endswith(",")
    # "A, B and C" without the serial comma needs two commas: "In the survey, men and women ..." is
    # an opening phrase and two items, not three
    if len(delimited) < (1 if serial_comma else 2):
        return None
    width = max(b - a for a, b in delimited)
    first = _take(words[j::-1], width, not_items, backwards=True)[::-1]
    last = _take(words[k + 1 :], width, not_items, backwards=False)
    if not first or not last:
        return None
    spans = [first, *(words[a:b] for a, b in reversed(delimited)), last]
    items = tuple(" ".join(w.group(0) for w in span).strip(_CLOSING) for span in spans)
    if any(not re.search(r"[^\W\d_]", item) for item in items):
        return None
    after = words[k + 1 + len(last) : k + 2 + len(last)]
    if after and after[0].group(0)[:1].isupper() and not last[-1].group(0).endswith(tuple(_CLOSING)):
        return None  # the last item runs on into a capitalised word: a list inside a name, "College of A, B, and C D"
    return SerialList(first[0].start(), last[-1].start() + len(last[-1].group(0).rstrip(_CLOSING)), items)


def _after_comma(words: list[re.Match[str]], j: int) -> int | None:
    """The first word of an item that ends at word `j`: the word after the nearest comma-ended word
    before it, within an item's length; None where there is none."""
    i = j
    while i > 0 and not words[i - 1].group(0).endswith(",") and j - i + 1 < _MAX_ITEM_WORDS:
        i -= 1
    return i if i > 0 and words[i - 1].group(0).endswith(",") else None


def _item(span: list[re.Match[str]], not_items: Collection[str]) -> bool:
    tokens = [w.group(0).strip(_CLOSING).casefold() for w in span]
    return 0 < len(tokens) <= _MAX_ITEM_WORDS and tokens[0] not in not_items and tokens[-1] not in not_items


def _take(words: list[re.Match[str]], width: int, not_items: Collection[str], backwards: bool) -> list[re.Match[str]]:
    """Up to `width` words of an open end of the list, `words` running away from it: stopping before
    a word that starts no item, and at a clause's end (walking back, a comma-ended word belongs to
    the clause before the list; walking on, the last item ends at its comma or question mark)."""
    out: list[re.Match[str]] = []
    for n, w in enumerate(words[:width]):
        token = w.group(0)
        bare = token.strip(_CLOSING).casefold()
        ends_clause = token.endswith(tuple(_CLOSING))
        if not bare or (bare in not_items and n == 0) or (backwards and n > 0 and ends_clause):
            break
        out.append(w)
        if ends_clause and not backwards:
            break
    else:  # walking on, a last word that closes the question goes with the item: "own a tablet [computer?]"
        rest = words[width : width + 1]
        if not backwards and rest and rest[0].group(0).endswith("?") and len(out) == width:
            out += rest
    while out and out[-1].group(0).strip(_CLOSING).casefold() in not_items:
        out.pop()  # an item ends with no article or preposition: "the share of [men who]"
    return out
