"""The offline generator: an extractive composer, grounded by construction (no model).

It answers from the context's own sentences and table rows: every sentence it writes is copied
from a quote (a table row is read as cells with their labels) and cited to it, `[i]` for text
quotes and `![short conclusion](imageN)` for image quotes placed right after the sentence they
support (MMDocRAG §3, Appendix E.3 formats).

Each part of the question (asking.py) is answered on its own: the candidates are ranked by
offline_scoring.py, and the best one that relevance.py finds answering the part (it holds the part's
anchors, gives the kind of value asked for, and is about what is asked) is written; a part nothing
answers gets "The documents do not say ..." with the reason, and a question no part of which is
answered is an abstention (`answerable` false). A table row is written as the cell(s) asked for
(table_cells.py); a figure is answered from its caption, its VLM-text or a sentence of the document
that names it, never from its OCR labels alone, and placed right after that sentence. More
sentences of an answering quote are added only when they answer the same part (quote-selection F1
rewards citing few quotes, and a sentence that answers no part is not written). What a question
asks to be worked out is answered apart: a count of the document's tables, figures or parts
(item_count.py, part_count.py), of a procedure's steps (step_count.py), a total (totals.py). This
module chooses (which row of a chosen table answers: row_choice.py); offline_writing.py writes what
it chose.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from interleaf.evidence import fold
from interleaf.generate.abbreviations import defined_abbreviations, with_abbreviations
from interleaf.generate.abstain import abstention
from interleaf.generate.answer_features import Candidates, candidate_features
from interleaf.generate.answer_ranker import AnswerRanker, fitted_ranker
from interleaf.generate.asking import Part
from interleaf.generate.boilerplate import repeated_on_pages
from interleaf.generate.config import OfflineConfig
from interleaf.generate.definitions import definition_sentence
from interleaf.generate.differences import difference, sentence_difference
from interleaf.generate.how_done import how_done_sentence
from interleaf.generate.item_count import count_answer
from interleaf.generate.listed_items import listed_answer
from interleaf.generate.offline_scoring import (
    Scored,
    score_units,
)
from interleaf.generate.offline_units import LABEL, Unit, image_labels, units_of
from interleaf.generate.offline_writing import without_repeats, write
from interleaf.generate.part_answer import PartAnswer, counts_another_thing, evidence_of
from interleaf.generate.part_titles import titles_answer
from interleaf.generate.protocol import (
    AnswerRequest,
    ContextQuote,
    GeneratedAnswer,
    ImageLoader,
    InputMode,
    relevance_order,
)
from interleaf.generate.relevance import Relevance, gives_value, names_float
from interleaf.generate.role_names import name_by_role
from interleaf.generate.row_choice import (
    extreme_instead,
    extreme_note,
    named_cell_instead,
    named_row_instead,
    row_instead,
)
from interleaf.generate.sentences import TableRow
from interleaf.generate.short_answer import (
    NOT_ANSWERABLE,
    asked_form_sentence,
    count_sentence,
    offline_short_answer,
    percent_sentence,
)
from interleaf.generate.similarity import model_version, similarities
from interleaf.generate.statement_values import statement_answer
from interleaf.generate.step_count import step_answer
from interleaf.generate.titled import titled_sentence
from interleaf.generate.totals import asks_total, total
from interleaf.structure.pages import float_on_named_page

# An abstention says why from the findings of the best-ranked candidates, this many (the reason's
# wording only; which candidate answers is the ranker's).
REASONS_FROM = 10
# "... and what is its value?": a part that points back at what the part before it found.
_PRONOUN = re.compile(r"\b(?:it|its|they|their|them|that|this|these|those)\b", re.I)
# Candidate kinds that can answer: a figure's OCR labels (axis ticks, legend words) only support.
ANSWERING = ("sentence", "caption", "row", "block")


@dataclass(frozen=True)
class Composed:
    markdown: str
    answerable: bool
    abstain_reason: str | None = None
    short_answer: str | None = None


def most_relevant_first(request: AnswerRequest) -> AnswerRequest:
    """The request with its quotes by retrieval score, highest first (the given order breaking ties;
    quotes without a score last): the ranker's rank features (answer_features: quote_rank,
    page_rank) were fitted on contexts read so, and the context may come in another order
    (retrieve.pages_take_turns, generate.quote_order). Each quote keeps its label."""
    quotes = request.quotes
    order = sorted(range(len(quotes)), key=lambda i: relevance_order(quotes[i].score, i))
    return replace(request, quotes=tuple(quotes[i] for i in order))


class OfflineGenerator:
    name = "offline"
    model: str | None = None
    input_mode: InputMode = "text"

    def __init__(self, config: OfflineConfig) -> None:
        self.config = config

    def prompt_hashes(self) -> list[str]:
        return []

    def version(self) -> dict[str, str]:
        return {"answer_ranker": fitted_ranker().digest, "similarity": model_version()}

    def generate(self, requests: list[AnswerRequest], load_image: ImageLoader) -> list[GeneratedAnswer]:
        out = []
        for r in requests:
            started = time.perf_counter()
            try:
                c = self.compose(r)
            except Exception as error:  # no failure is expected here: a bug, to be raised with its question
                error.add_note(f"offline generator, question {r.question_id}")
                raise
            seconds = time.perf_counter() - started
            out.append(
                GeneratedAnswer(
                    r.question_id,
                    c.markdown,
                    seconds=seconds,
                    answerable=c.answerable,
                    abstain_reason=c.abstain_reason,
                    short_answer=c.short_answer,
                )
            )
        return out

    def compose(self, request: AnswerRequest) -> Composed:
        """The answer's Markdown: each part's answering sentence, cited, images beside theirs; or
        "The documents do not say ..." for what nothing answers."""
        request = most_relevant_first(request)
        relevance = Relevance(request.question, request.quotes, request.documents_text)
        if not relevance.parts:
            return Composed("", False, "the question is blank")
        labels = image_labels(request.quotes)
        units = request_units(request)
        if not units:
            why = "no quote was retrieved"
            return Composed(abstention(request.question, why), False, why, NOT_ANSWERABLE)
        if request.counted:  # "how many figures are there in the report?": counted over it, not ranked
            markdown, count = count_answer(request)
            return Composed(markdown, True, short_answer=count)
        if request.listed:  # "how many kettle drills are included?": the items listed under that name
            markdown, count = listed_answer(request)
            return Composed(markdown, True, short_answer=count)
        if request.statement_lines:  # "the inventory to total equity ratio?": read from the statements
            markdown, ratio = statement_answer(request)
            return Composed(markdown, True, short_answer=ratio)
        if request.named_parts:  # "what are the names of Lesson 1 and Lesson 2?": read where each is named
            markdown, titles = titles_answer(request)
            return Composed(markdown, True, short_answer=titles)
        if stepped := step_answer(request.question, request.quotes):  # "how many steps ... to X?"
            return Composed(stepped[0], True, short_answer=stepped[1])
        missing_float = _float_missing(request)
        if missing_float:
            return Composed(abstention(request.question, missing_float), False, missing_float, NOT_ANSWERABLE)
        ranker = fitted_ranker()
        defined = defined_abbreviations(q.text for q in request.quotes)
        answers: list[PartAnswer] = []
        # a running foot the parser left in the text is never written (boilerplate.py)
        furniture = {q.quote_id for q in request.quotes if repeated_on_pages(q, request.documents_text)}
        for part in relevance.parts:
            candidates = rank_part(request, part, units, labels, relevance, defined)
            ranked = tuple(
                without_repeats(
                    sorted(
                        (
                            Scored(s.unit, float(p), s.terms, s.anchors)
                            for s, p in zip(candidates.scored, ranker.probabilities(candidates.matrix), strict=True)
                            if s.unit.quote.quote_id not in furniture
                        ),
                        key=lambda s: -s.score,
                    )
                )
            )
            # "CityQuests" is read as "CQ" too where the document defines it so: its tables' labels
            labelled = replace(part, text=with_abbreviations(part.text, defined))
            answers.append(_answer_part(labelled, ranked, units, relevance, answers, ranker, request.named_pages))
        if not any(a.chosen for a in answers):
            why = "; ".join(dict.fromkeys(a.reason for a in answers))
            return Composed(abstention(request.question, why), False, why, NOT_ANSWERABLE)
        by_id = {q.quote_id: q for q in request.quotes}
        figures = {(by_id[qid].doc_id, fold(label)): by_id[qid] for qid, label in labels.items()}
        markdown = write(answers, units, relevance, figures, self.config.max_words, dict(request.continued))
        short = offline_short_answer(request.question, answers, units)
        restated = asked_form_sentence(request.question, short, markdown) or count_sentence(
            request.question, short, markdown
        )
        if all(a.chosen.unit.kind == "row" for a in answers if a.chosen is not None):  # cells print no unit
            restated = " ".join(filter(None, (restated, percent_sentence(request.question, short, markdown))))
        return Composed(f"{markdown} {restated}" if restated else markdown, True, short_answer=short)


def _float_missing(request: AnswerRequest) -> str | None:
    """Why the question cannot be answered where it points, when it asks about a table (a figure) on
    a page it names and the parser found none of that kind there (nor on the page printed with that
    number): "the table at page 23" of a page that holds a figure. The question's premise fails; an
    answer from the page's other quotes, or from another page, would answer a question not asked.
    Worth, on the dev half: one unanswerable question refused (a diagram asked of a page
    holding a table), no answerable one; refusing a table asked of a page holding only a figure
    would refuse one more, and the corpus guide's staging table, which the parser reads as a figure."""
    asked = float_on_named_page(request.question)
    # a table is often parsed as a figure (a coloured one, drawn in boxes): either answers for it
    accepted = {"table", "figure"} if asked and asked[0] == "table" else {"figure"}
    if not asked or not request.named_pages or accepted & request.named_page_floats:
        return None
    return f"{asked[1]} holds no {asked[0]}"


def request_units(request: AnswerRequest) -> list[Unit]:
    """The candidates of the request's context: every sentence, caption, row and figure text of its quotes."""
    return [u for q in request.quotes for u in units_of(q)]


def rank_part(
    request: AnswerRequest,
    part: Part,
    units: Sequence[Unit],
    labels: dict[str, str],
    relevance: Relevance,
    defined: dict[str, str],
) -> Candidates:
    """Every candidate of the context for one part of the question, with its rule-based score and
    its feature row (answer_features.py): what the fitted ranker reads, here and when it is fitted.
    `defined`: the abbreviations the context's quotes define (abbreviations.defined_abbreviations)."""
    single = len(relevance.parts) == 1
    question, clauses = (request.question, request.clauses[1:]) if single else (part.text, ())
    # "CityQuests" finds the column the document abbreviates "CQ", and the other way round
    question = with_abbreviations(question, defined)
    scored = score_units(question, clauses, units, labels, request.quotes)
    evidence = [evidence_of(u, units) for u in units]
    close = similarities(question, [u.text for u in units], np.array([s.score for s in scored]))
    matrix = candidate_features(
        question, part, units, scored, request.quotes, relevance, evidence, close, request.named_pages
    )
    return Candidates(tuple(units), tuple(scored), matrix)


def can_answer(part: Part, unit: Unit) -> bool:
    """A candidate the composer may write for the part: of an answering kind (or a figure's labels),
    and, for a part that asks for a number, an amount, a date or a code, giving one."""
    return unit.kind in (*ANSWERING, "ocr") and (part.want == "text" or gives_value(part, unit.text))


# the sentence a question's form points to, ahead of the fitted ranker's choice: "how does A record
# X?" -> "X is recorded ..." (how_done.py); "how does the guide define X?" -> its definition (definitions.py);
# "what is the title of the keynote?" -> "Keynote: Harbour Lights" (titled.py)
_SENTENCE_ANSWERS = (how_done_sentence, definition_sentence, titled_sentence)


def _answer_part(
    part: Part,
    ranked: Sequence[Scored],
    units: Sequence[Unit],
    relevance: Relevance,
    before: list[PartAnswer],
    ranker: AnswerRanker,
    pages: frozenset[tuple[str, int]] = frozenset(),
) -> PartAnswer:
    """The candidate the fitted ranker gives the highest probability, when that probability reaches
    the fitted threshold (or, where that one is plainly about something else, the next that is not:
    `_placed`); for a part that speaks of what the part before it found ("..., and what
    is its value?"), that first; a table's caption gives way to its row that answers, and for "which
    ... highest" the row holding the extreme; a figure's labels are written as the figure with
    them quoted. Below the threshold, nothing, with the reason; nothing too for a part naming what
    its documents never print, where the fitted ranker says so."""
    ranked = tuple(ranked)
    if ranker.refuse_never_printed and relevance.never_printed(part):
        return PartAnswer(part, None, ranked, relevance.reason(part, []))
    earlier = before[-1].chosen if before else None
    # a table row holds more than the cell the part before asked for: "its value", "the two counts"
    refers_back = earlier is not None and earlier.unit.row is not None and not part.required
    if refers_back and _PRONOUN.search(part.text):
        # what "it" is, the row says; the row need only give the kind of value asked ("its value")
        bare = Part("", (), part.want, frozenset(), part.numbers, part.currency)
        if relevance.check(bare, evidence_of(earlier.unit, units)).ok:
            return PartAnswer(part, earlier, ranked)
    if (named := name_by_role(part, ranked, pages)) is not None:  # "who is the claimant?"
        return PartAnswer(part, named, ranked, labels_only=named.unit.kind == "ocr")
    for picked in _SENTENCE_ANSWERS:
        if (said := picked(part, ranked)) is not None:
            return PartAnswer(part, said, ranked)
    candidates = [s for s in ranked if can_answer(part, s.unit)]
    summed = _total_answer(part, candidates, ranked, units, ranker)
    if summed is not None:
        return summed
    first = None  # below the threshold, or a row of another quantity than the one the part names
    if candidates and candidates[0].score >= ranker.threshold:
        first = _named_caption(part, candidates, units) or _placed(candidates, part, units, relevance, ranker)
    if first is None:
        findings = [relevance.check(part, evidence_of(s.unit, units)) for s in candidates[:REASONS_FROM]]
        return PartAnswer(part, None, ranked, relevance.reason(part, findings))
    if first.unit.kind == "ocr":
        return PartAnswer(part, first, ranked, labels_only=True)
    first = named_cell_instead(row_instead(first, part, ranked, units, relevance), part, candidates, ranker.threshold)
    first = extreme_instead(named_row_instead(first, part, ranked, units), part, ranked, units, relevance)
    worked_out = None
    if first.unit.row is not None:
        table = [u.row for u in units if u.quote is first.unit.quote and u.row is not None]
        worked_out = difference(part, table, first.unit.row, _other_tables(first.unit.quote, units))
    elif first.unit.kind == "sentence":
        worked_out = sentence_difference(part, first.unit.text)
    return PartAnswer(part, first, ranked, extreme=extreme_note(first, part, units), worked_out=worked_out)


def _other_tables(quote: ContextQuote, units: Sequence[Unit]) -> dict[str, list[TableRow]]:
    """quote id -> the rows of each table of the context but `quote`'s."""
    tables: dict[str, list[TableRow]] = {}
    for u in units:
        if u.row is not None and u.quote is not quote:
            tables.setdefault(u.quote.quote_id, []).append(u.row)
    return tables


def _total_answer(
    part: Part, candidates: Sequence[Scored], ranked: Sequence[Scored], units: Sequence[Unit], ranker: AnswerRanker
) -> PartAnswer | None:
    """For a part asking for a total ("... A, B and C in total?"): the best-ranked table row above
    the threshold, when its table gives the total of what the part names (totals.py), with the
    other rows summed written beside it. Ahead of the one-candidate choice: a sentence or row
    holding one of the items is not the total, and one naming all of them (a chart's title) gives
    no number."""
    if not asks_total(part.text):
        return None
    row = next((s for s in candidates if s.unit.row is not None), None)
    if row is None or row.score < ranker.threshold:
        return None
    q = row.unit.quote
    table = [u.row for u in units if u.quote is q and u.row is not None]
    found = total(part, table, row.unit.row, " ".join(filter(None, (q.caption, q.text, q.ocr_text))))
    if found is None:
        return None
    return PartAnswer(part, row, tuple(ranked), compared=found.rows, worked_out=found)


def _placed(
    candidates: Sequence[Scored], part: Part, units: Sequence[Unit], relevance: Relevance, ranker: AnswerRanker
) -> Scored | None:
    """The best candidate, unless its evidence is plainly about another thing than the part asks:
    then the best one above the threshold whose evidence passes the part's check. Plainly: it lacks
    a number or a numbered label the question names ("(9 negatives)" against a row of 128+256;
    "Level I" against a sentence on "Level III"), or it holds none of the part's names and is not
    about its words. A name merely missing does not count: the required names include a document's
    own subject, unwritten in its rows ("Acme" in Acme's annual report), and capitalised common words.
    Worth, on the dev sets: qa_dev_answers 3 questions more, the dev half unchanged; counting any
    missing name cost the dev half 2.

    None (the part refused) where no candidate passes and the best is a table row lacking a number
    the part names: the row of another quantity ("the value at 12" against a table's rows for 0 to
    10) is no answer. Worth, on the dev sets: unanswerable questions refused, the dev half 54.7 ->
    56.2%, qa_dev_answers 0.6 -> 0.8; false abstention on the dev half 3.8 -> 4.7%. Refusing a
    sentence so as well refused 28% of the dev half's answerable questions: its years and counts
    are often printed beside the sentence, not in it."""
    best = candidates[0]
    # a sentence counting another thing than the "how many" asks: the next that passes, or none
    if counts_another_thing(part.text, best.unit.kind, best.unit.text):
        return next(
            (
                s
                for s in candidates[1:]
                if s.score >= ranker.threshold
                and not counts_another_thing(part.text, s.unit.kind, s.unit.text)
                and relevance.check(part, evidence_of(s.unit, units)).ok
            ),
            None,
        )
    finding = relevance.check(part, evidence_of(best.unit, units))
    if finding.ok:
        return best
    numbered = [
        a for a in part.required if a.text in finding.missing and (a.kind == "number" or _NUMBERED_LABEL.search(a.text))
    ]
    if finding.missing and not numbered:
        return best
    for s in candidates[1:]:
        if s.score < ranker.threshold:
            break
        if relevance.check(part, evidence_of(s.unit, units)).ok:
            return s
    return None if best.unit.row is not None and any(a.kind == "number" for a in numbered) else best


# a label ending in its number, Arabic or Roman: "Stage I", "Grade 3", "Lesson 9", "Phase IIB"
_NUMBERED_LABEL = re.compile(r"\s(?:\d+[A-Za-z]?|[IVX]+[A-D]?)$")


def _named_caption(part: Part, ranked: Sequence[Scored], units: Sequence[Unit]) -> Scored | None:
    """For a part that asks about a table or figure it names and nothing narrower ("What does Table 2
    compare?"), that float's caption: it says what the float shows, whatever words the part uses."""
    if part.required or not any(a.kind == "reference" and LABEL.fullmatch(a.text) for a in part.anchors):
        return None
    captions = (s for s in ranked if s.unit.kind == "caption")
    return next((s for s in captions if names_float(part, evidence_of(s.unit, units))), None)
