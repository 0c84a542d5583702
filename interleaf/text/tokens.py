"""The one word tokenizer: BM25, query expansion, the lexical reranker and answer checks share it."""

from __future__ import annotations

import re

# Keep numbers with their decimals and percent signs ("53.7", "8.4%"): evidence is often a number.
_TOKEN = re.compile(r"[0-9]+(?:[.,][0-9]+)*%?|[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "which",
        "who",
        "with",
        "how",
        "does",
        "do",
        "did",
        "their",
        "there",
        "these",
        "those",
        "than",
        "then",
        "into",
        "about",
        "according",
    ]
)


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.casefold()) if t not in STOPWORDS]
