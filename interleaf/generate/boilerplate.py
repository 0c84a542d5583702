"""Text a document prints on page after page: a running foot the parser did not mark as one ("Draft
0ct 09 2002 09:18 Frm 00005 Fmt 6633"), a distribution notice under every table. It says nothing
about what any page holds, and its dates and numbers would answer any question asking for one: the
composer never writes it. A quote is such text when, with its digits masked (the page number or
frame count it carries changes from page to page), the document prints it three times or more.
Worth, on the MMLongBench-Doc dev half, with the dates `relevance.gives_value` reads: one answerable
question more right (of 234), no other verdict moved; the corpus dev sets do not move.
"""

from __future__ import annotations

import re
from functools import lru_cache

from interleaf.generate.protocol import ContextQuote

_DIGITS = re.compile(r"\d+")
# shorter text repeats by chance ("Table 2", "Source:"); set by reading, not fitted
_MIN_CHARS = 20
# the times a document prints a text for it to be a page's furniture; twice is a paragraph a
# guide repeats in two of its chapters (set by reading the dev half's manuals, not fitted)
_MIN_TIMES = 3


@lru_cache(maxsize=8)
def _masked(text: str) -> str:
    """The text with its digits masked and its spacing made one: read once per document."""
    return " ".join(_DIGITS.sub("0", text).split())


def repeated_on_pages(quote: ContextQuote, documents_text: str | None) -> bool:
    """The quote is a text quote its document prints `_MIN_TIMES` times or more, its digits aside;
    False in corpus scope, where no document's text is given."""
    if documents_text is None or quote.modality != "text":
        return False
    text = " ".join(_DIGITS.sub("0", quote.text).split())
    return len(text) >= _MIN_CHARS and _masked(documents_text).count(text) >= _MIN_TIMES
