"""Whether a short piece of text is a formula ("a2 + 8 = 12", "sim(q, d) = E(q)ᵀE(d)"), told by
its characters, not by a list of formulas.

A formula is operands joined by operators: its variables are single letters or short names with
indices, the rest digits, brackets and symbols; prose, a heading included, is words. So a text is
a formula when
- it states a relation between two operands ("=", "≤", "∈", "→"), or holds a big operator ("∑",
  "√"), or two arithmetic operators between operands ("a + b · c"): a lone "+" is as often a label
  ("D+3", "Sync+", "C++") as arithmetic;
- and its words (runs of two letters or more: "log", "max", "Ex"; not "x", nor "a" in "a2"; an
  identifier joined by underscores whole) make up under half of its characters: "0 = Off" is a
  legend and "n_docs = 5" a line of code, not formulas.
"""

from __future__ import annotations

import re

# Relations. Not the ASCII hyphen nor the slash anywhere here: prose writes "well-known", "25-29"
# and "and/or" with them.
RELATIONS = "=<>≤≥≦≧≠≈≡≅∼≃∝∈∉∋⊂⊆⊃⊇→←↔⇒⇐⇔↦⊢⊨"
ARITHMETIC = "+−×÷·∗*±∓⊕⊗∘"
# Operators written before their operand alone: sums, products, integrals, roots, derivatives.
BIG = "∑∏∫∮√∂∇"
# An operand ends just before an operator (a letter or digit, with primes; a closing bracket) and
# starts just after one (a letter or digit, an opening bracket, a sign, a big operator), on the
# same line: "80+" above "37" in a chart's labels is no sum.
_OPERAND_BEFORE = re.compile(r"(?:[^\W_][′″'*]*|[)\]}|])[ \t]*$")
_OPERAND_AFTER = re.compile(r"[ \t]*(?:[^\W_]|[(\[{|\-−+√∑∏∫∂∇∞])")
# A programme's identifier joined by underscores ("CFG_rB2_7_LOSS") is one word of code, not symbols.
_WORD = re.compile(r"[^\W\d_]\w*_\w*|[^\W\d_]{2,}")
# Words take under this share of a formula's characters. Measured on the title and text boxes of
# three rows or fewer holding an operator, on the pages of ../shared/corpus and of the
# MMLongBench-Doc dev half that hold one: the display formulas reached 0.42 at most (a formula naming
# functions, as "arg topK" does), code legends ("1 = Active") 0.5 and more, headings and menu paths
# 0.8 and more. Higher, the legends become formulas; lower, the formulas naming functions stay text.
MAX_WORD_SHARE = 0.5


def _binary(text: str, i: int) -> bool:
    """Whether the operator at `i` has an operand on each side."""
    return bool(_OPERAND_BEFORE.search(text, 0, i)) and bool(_OPERAND_AFTER.match(text, i + 1))


def has_operator(text: str) -> bool:
    """A relation between two operands, a big operator, or two arithmetic operators between operands."""
    if any(c in BIG for c in text):
        return True
    arithmetic = 0
    for i, c in enumerate(text):
        if c in RELATIONS and _binary(text, i):
            return True
        if c in ARITHMETIC and _binary(text, i):
            arithmetic += 1
    return arithmetic >= 2


def word_share(text: str) -> float:
    """The share of a text's non-space characters that belong to words: two letters or more, or an
    identifier joined by underscores."""
    chars = sum(not c.isspace() for c in text)
    return sum(len(w) for w in _WORD.findall(text)) / chars if chars else 1.0


def is_formula(text: str) -> bool:
    return word_share(text) < MAX_WORD_SHARE and has_operator(text)
