"""What the offline composer knows of one candidate, as numbers: the inputs of its fitted ranker
(answer_ranker.py).

Every feature means the same on any document: how much of the question's wording (rarity-weighted,
folded for case, hyphens and spacing, stemmed) the candidate and its quote hold; the share of the
question's anchors (names, numbers, quoted phrases, `Table 2`) it holds; whether it gives the kind
of value asked (a number, a date); what kind of candidate it is (a sentence, a caption, a table row,
a figure's statement or label); where the retriever put its quote; whether the rule-based relevance
test (relevance.py) finds it answering. No feature names a word of any document: the weights that
combine them are fitted (benchmarks/fit_answer_ranker.py), not chosen.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from interleaf.evidence import fold
from interleaf.expand.instructions import wants_quantity
from interleaf.generate.asking import Part
from interleaf.generate.offline_scoring import (
    Scored,
    cue_holders,
    extreme_row_ids,
    has_word,
    query_weights,
    quote_words,
)
from interleaf.generate.offline_units import LABEL, Unit
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.relevance import Evidence, Relevance, names_another_float, names_float
from interleaf.generate.sentences import addresses_in, content_words, numbers_in, quantities_in
from interleaf.generate.table_cells import label_chars_stated

# the order of the columns of `features`; the fitted weights are stored by these names
FEATURES = (
    "coverage",  # the question's words the candidate holds, rarity-weighted share
    "coverage_quote",  # ... that only the rest of its quote (or its table's caption) holds
    "anchors",  # the question's anchors it holds, rarity-weighted share
    "composite",  # the rule-based score (offline_scoring.py) over its context's best
    "composite_top",  # 1 for the best rule-based score of the context
    "quote_rank",  # 1 / (1 + the retriever's rank of its quote)
    "unit_rank",  # 1 / (1 + its rank by the rule-based score)
    "number_asked_given",  # the question asks for a quantity and it states one, not the question's, not a date's
    "number_asked_missing",  # ... and it states none ("as of February 17, 2026" states no quantity)
    # the question asks when and it states a year or a month, or asks for a web or email address and
    # it gives one
    "kind_asked_given",
    "relevant",  # the relevance test finds it answering the part
    "names_float",  # it is (or names) the table or figure the question names
    "names_other_float",  # it names another table or figure than the one the question names
    "extreme_row",  # the row holding the highest (lowest) value the question asks for
    "row_label_stated",  # a table row: the share of the question's characters that state its label cells whole
    "header_match",  # a table row: the share of the question's words its best column header holds
    "kind_sentence",
    "kind_caption",
    "kind_row",
    "kind_block",
    "kind_ocr",
    "image_quote",
    "log_words",  # log(1 + its words): long sentences hold more words by chance
    "adds_nothing",  # it holds no word and no number the question does not (a heading that repeats it)
    "similarity",  # cosine similarity of its embedding to the question's (similarity.py)
    "similarity_gap",  # how far under the context's most similar candidate it is
    "anchor_absent",  # the part names something (a name, a number, a quoted phrase) no quote of the context holds
    "anchors_missing",  # the share of the part's required anchors the candidate (read with its evidence) lacks
    "anchors_off_page",  # ... that no context quote of the candidate's page holds
    "times_off_page",  # the share of the part's years and dates no context quote of its page holds
    "anchor_never_printed",  # the part names something, or a year, the documents asked about never print (doc scope)
    "off_named_page",  # the question names pages ("the chart on page 14") and its quote is on none of them
    "page_quotes",  # the share of the context's quotes on its page: a page retrieved many times over
    "page_rank",  # 1 / (1 + the retriever's best rank of a quote on its page)
)

_YEAR_OR_MONTH = re.compile(
    r"\b(?:1[5-9]\d\d|20\d\d)\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.I
)


@dataclass(frozen=True)
class Candidates:
    """A context's candidates for one question part, and their feature rows (one per unit)."""

    units: tuple[Unit, ...]
    scored: tuple[Scored, ...]  # the rule-based scores, in `units` order
    matrix: np.ndarray  # len(units) x len(FEATURES)


def candidate_features(
    question: str,
    part: Part,
    units: Sequence[Unit],
    scored: Sequence[Scored],
    quotes: Sequence[ContextQuote],
    relevance: Relevance,
    evidence: Sequence[Evidence],
    similarity: np.ndarray,
    named_pages: frozenset[tuple[str, int]] = frozenset(),
) -> np.ndarray:
    """One row of FEATURES per unit. `scored`, `evidence` and `similarity` are the units' rule-based
    scores, the evidence each is read with (part_answer.evidence_of) and their similarity to the
    question, in `units` order; `named_pages`: the (doc_id, page_idx) the question names
    (AnswerRequest.named_pages)."""
    weights = query_weights(question, (), units)
    total = sum(weights.values()) or 1.0
    holders = cue_holders(question, units, quotes)
    cue_weight = {c: c.weight * math.log(1 + len(units) / len(ids)) for c, ids in holders.items() if ids}
    cue_total = sum(cue_weight.values()) or 1.0
    context = quote_words(units)
    extremes = extreme_row_ids(question, units)
    best = max((s.score for s in scored), default=0.0) or 1.0
    order = {id(s): r for r, s in enumerate(sorted(scored, key=lambda s: -s.score))}
    rank = {q.quote_id: i for i, q in enumerate(quotes)}
    # where the retrievers agree on a page (many of its quotes retrieved, one of them high), the answer
    # is more often there than its own quote's rank says. Tried and dropped (held out, worse): each
    # quote counted by the share of the question's words it holds; the page's rank by log or square root
    pages = [(q.doc_id, q.page_idx) for q in quotes]
    page_quotes = Counter(pages)
    page_first: dict[tuple[str, int], int] = {}
    for i, page in enumerate(pages):
        page_first.setdefault(page, i)
    quantity = wants_quantity(question) or part.want in ("number", "money")
    date = part.want == "date"
    address = part.want == "address"
    named = bool(LABEL.search(question))
    question_folded = fold(question)
    question_length = len(question_folded) or 1
    asked = set(content_words(question))
    own_numbers = set(numbers_in(question))
    top_similarity = float(similarity.max()) if len(similarity) else 0.0
    absent = float(bool(relevance.absent(part)))
    never_printed = float(bool(relevance.never_printed(part)))
    rows = np.zeros((len(units), len(FEATURES)), dtype=np.float64)
    for i, (u, s, ev) in enumerate(zip(units, scored, evidence, strict=True)):
        own = {t for t in weights if has_word(u.words, t)}
        near = {t for t in weights if t in context[u.quote.quote_id]} - own
        held = [c for c, ids in holders.items() if id(u) in ids and c in cue_weight]
        finding = relevance.check(part, ev)
        off_page, times_off_page = relevance.off_page(part, u.quote)
        stated = set(quantities_in(u.text)) if quantity else set()
        values = {
            "coverage": sum(weights[t] for t in own) / total,
            "coverage_quote": sum(weights[t] for t in near) / total,
            "anchors": sum(cue_weight[c] for c in held) / cue_total,
            "composite": s.score / best,
            "composite_top": float(s.score >= best),
            "quote_rank": 1.0 / (1 + rank.get(u.quote.quote_id, len(quotes))),
            "unit_rank": 1.0 / (1 + order[id(s)]),
            "number_asked_given": float(quantity and bool(stated - own_numbers)),
            "number_asked_missing": float(quantity and not stated - own_numbers),
            "kind_asked_given": float(
                (date and _YEAR_OR_MONTH.search(u.text) is not None)
                or (address and bool(addresses_in(u.text, question)))
            ),
            "relevant": float(finding.ok),
            "names_float": float(named and names_float(part, ev)),
            "names_other_float": float(named and names_another_float(part, ev)),
            "extreme_row": float(id(u) in extremes),
            "row_label_stated": label_chars_stated(u.row, question_folded) / question_length if u.row else 0.0,
            "header_match": _header_match(u, asked),
            "kind_sentence": float(u.kind == "sentence"),
            "kind_caption": float(u.kind == "caption"),
            "kind_row": float(u.kind == "row"),
            "kind_block": float(u.kind == "block"),
            "kind_ocr": float(u.kind == "ocr"),
            "image_quote": float(u.quote.modality == "image"),
            "log_words": math.log1p(len(u.text.split())),
            "adds_nothing": float(u.words <= asked and set(u.numbers) <= own_numbers),
            "similarity": float(similarity[i]),
            "similarity_gap": float(top_similarity - similarity[i]),
            "anchor_absent": absent,
            "anchors_missing": len(finding.missing) / len(part.required) if part.required else 0.0,
            "anchors_off_page": off_page,
            "times_off_page": times_off_page,
            "anchor_never_printed": never_printed,
            "off_named_page": float(bool(named_pages) and (u.quote.doc_id, u.quote.page_idx) not in named_pages),
            "page_quotes": page_quotes[(u.quote.doc_id, u.quote.page_idx)] / max(len(quotes), 1),
            "page_rank": 1.0 / (1 + page_first.get((u.quote.doc_id, u.quote.page_idx), len(quotes))),
        }
        rows[i] = [values[name] for name in FEATURES]
    return rows


def _header_match(unit: Unit, asked: set[str]) -> float:
    """For a row: the share of the question's words that its best-matching column header holds."""
    if unit.row is None or not asked:
        return 0.0
    return max((len(set(content_words(h)) & asked) for h in unit.row.header), default=0) / len(asked)
