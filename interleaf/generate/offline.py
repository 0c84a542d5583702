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
rewards citing few quotes, and a sentence that answers no part is not written).
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
from interleaf.generate.citations import add_placing_once, image_alt
from interleaf.generate.config import OfflineConfig
from interleaf.generate.offline_scoring import Scored, extreme_row_ids, score_units, superlative
from interleaf.generate.offline_units import (
    LABEL,
    LEAD_IN,
    Unit,
    caption_of,
    escape_marks,
    image_labels,
    units_of,
    where,
)
from interleaf.generate.protocol import AnswerRequest, ContextQuote, GeneratedAnswer, ImageLoader, InputMode
from interleaf.generate.relevance import Evidence, Relevance, gives_value, names_float
from interleaf.generate.sentences import TableRow, keep_together
from interleaf.generate.short_answer import NOT_ANSWERABLE, offline_short_answer
from interleaf.generate.similarity import model_version, similarities
from interleaf.generate.table_cells import Difference, cell_sentence, difference, label_words_stated, with_legend

# More sentences from an answering quote: those answering the same part and scoring at least this
# share of its best, at most this many. Set by reading before the relevance test existed, on qa_dev
# (quote-selection F1 / number recall from 0.833 / 0.810): 0.6: 0.833/0.783; at most 4: 0.833/0.737.
SAME_QUOTE_RELATIVE = 0.5
MAX_PER_QUOTE = 6
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


@dataclass(frozen=True)
class PartAnswer:
    part: Part
    chosen: Scored | None
    ranked: tuple[Scored, ...]
    reason: str = ""  # why nothing answers it
    compared: tuple[TableRow, ...] = ()  # rows written beside the chosen one: the other side of a comparison
    labels_only: bool = False  # answered by a figure's labels: written as the figure, the labels quoted
    extreme: str = ""  # "the highest of the table's rows": the chosen row is the extreme a superlative asks for
    # "how much higher ... than ...": the difference worked out from the chosen row's table, written
    # in the answer and given as its short answer
    difference: Difference | None = None


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
        relevance = Relevance(request.question, request.quotes, request.documents_text)
        if not relevance.parts:
            return Composed("", False, "the question is blank")
        labels = image_labels(request.quotes)
        units = [u for q in request.quotes for u in units_of(q)]
        if not units:
            why = "no quote was retrieved"
            return Composed(abstention(request.question, why), False, why, NOT_ANSWERABLE)
        ranker = fitted_ranker()
        defined = defined_abbreviations(q.text for q in request.quotes)
        answers: list[PartAnswer] = []
        for part in relevance.parts:
            candidates = rank_part(request, part, units, labels, relevance, defined)
            ranked = tuple(
                _without_repeats(
                    sorted(
                        (
                            Scored(s.unit, float(p), s.terms, s.anchors)
                            for s, p in zip(candidates.scored, ranker.probabilities(candidates.matrix), strict=True)
                        ),
                        key=lambda s: -s.score,
                    )
                )
            )
            # "WebQuestions" is read as "WQ" too where the document defines it so: its tables' labels
            labelled = replace(part, text=with_abbreviations(part.text, defined))
            answers.append(_answer_part(labelled, ranked, units, relevance, answers, ranker))
        if not any(a.chosen for a in answers):
            why = "; ".join(dict.fromkeys(a.reason for a in answers))
            return Composed(abstention(request.question, why), False, why, NOT_ANSWERABLE)
        by_id = {q.quote_id: q for q in request.quotes}
        figures = {(by_id[qid].doc_id, fold(label)): by_id[qid] for qid, label in labels.items()}
        markdown = write(answers, units, relevance, figures, self.config.max_words)
        return Composed(markdown, True, short_answer=offline_short_answer(request.question, answers, units))


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
    # "WebQuestions" finds the column the document abbreviates "WQ", and the other way round
    question = with_abbreviations(question, defined)
    scored = score_units(question, clauses, units, labels, request.quotes)
    evidence = [evidence_of(u, units) for u in units]
    close = similarities(question, [u.text for u in units], np.array([s.score for s in scored]))
    matrix = candidate_features(question, part, units, scored, request.quotes, relevance, evidence, close)
    return Candidates(tuple(units), tuple(scored), matrix)


def can_answer(part: Part, unit: Unit) -> bool:
    """A candidate the composer may write for the part: of an answering kind (or a figure's labels),
    and, for a part that asks for a number, an amount, a date or a code, giving one."""
    return unit.kind in (*ANSWERING, "ocr") and (part.want == "text" or gives_value(part, unit.text))


def _answer_part(
    part: Part,
    ranked: Sequence[Scored],
    units: Sequence[Unit],
    relevance: Relevance,
    before: list[PartAnswer],
    ranker: AnswerRanker,
) -> PartAnswer:
    """The candidate the fitted ranker gives the highest probability, when that probability reaches
    the fitted threshold; for a part that speaks of what the part before it found ("..., and what
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
    candidates = [s for s in ranked if can_answer(part, s.unit)]
    if not candidates or candidates[0].score < ranker.threshold:
        findings = [relevance.check(part, evidence_of(s.unit, units)) for s in candidates[:REASONS_FROM]]
        return PartAnswer(part, None, ranked, relevance.reason(part, findings))
    first = _named_caption(part, candidates, units) or candidates[0]
    if first.unit.kind == "ocr":
        return PartAnswer(part, first, ranked, labels_only=True)
    first = _row_instead(first, part, ranked, units, relevance)
    first = _extreme_instead(_named_row_instead(first, part, ranked, units), part, ranked, units, relevance)
    worked_out = None
    if first.unit.row is not None:
        table = [u.row for u in units if u.quote is first.unit.quote and u.row is not None]
        worked_out = difference(part, table, first.unit.row)
    return PartAnswer(part, first, ranked, extreme=_extreme_note(first, part, units), difference=worked_out)


def _extreme_note(chosen: Scored, part: Part, units: Sequence[Unit]) -> str:
    """What a superlative's answer was compared over: "the highest of the table's rows" (no count: a
    number the quote does not print would be a claim its citation does not back)."""
    if chosen.unit.row is None:
        return ""
    table = [u for u in units if u.quote is chosen.unit.quote and u.row is not None]
    word = superlative(part.text)
    if not word or id(chosen.unit) not in extreme_row_ids(part.text, table):
        return ""
    return f"the {word.casefold()} of the table's rows"


def _row_instead(
    chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit], relevance: Relevance
) -> Scored:
    """A table's caption says what the table is about, its rows what it holds: where a row of the
    same table answers the part too ("which sub-metric has the lowest correlation in Table 6"), the
    best-ranked such row."""
    if chosen.unit.kind != "caption" or not any(u.quote is chosen.unit.quote and u.row for u in units):
        return chosen
    same_table = (s for s in ranked if s.unit.quote is chosen.unit.quote and s.unit.row is not None)
    return next((s for s in same_table if relevance.check(part, evidence_of(s.unit, units)).ok), chosen)


def _named_caption(part: Part, ranked: Sequence[Scored], units: Sequence[Unit]) -> Scored | None:
    """For a part that asks about a table or figure it names and nothing narrower ("What does Table 2
    compare?"), that float's caption: it says what the float shows, whatever words the part uses."""
    if part.required or not any(a.kind == "reference" and LABEL.fullmatch(a.text) for a in part.anchors):
        return None
    captions = (s for s in ranked if s.unit.kind == "caption")
    return next((s for s in captions if names_float(part, evidence_of(s.unit, units))), None)


def _named_row_instead(chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit]) -> Scored:
    """The row whose label cells the question states most fully wins over the chosen row of its
    table: "BM25" names the BM25 row, not the "BM25 + DPR" one that holds the word too, and "PaLM-2L
    + Step-Back" names the "PaLM-2L + Step-Back (ours)" row, not the "PaLM-2L" one inside it."""
    if chosen.unit.row is None:
        return chosen
    asked = fold(part.text)
    same_table = [s for s in ranked if s.unit.quote is chosen.unit.quote and s.unit.row is not None]
    named = {id(s): label_words_stated(s.unit.row, asked) for s in same_table if s.unit.row is not None}
    most = max(named.values(), default=0)
    if named.get(id(chosen), 0) >= most:
        return chosen
    return next(s for s in same_table if named[id(s)] == most)


def _extreme_instead(
    chosen: Scored, part: Part, ranked: Sequence[Scored], units: Sequence[Unit], relevance: Relevance
) -> Scored:
    """For "which ... the highest ...", the row of the chosen row's table that holds the extreme."""
    if chosen.unit.row is None:
        return chosen
    table = [u for u in units if u.quote is chosen.unit.quote and u.row is not None]
    top = extreme_row_ids(part.text, table)
    if not top or id(chosen.unit) in top:
        return chosen
    for s in ranked:
        if id(s.unit) in top and relevance.check(part, evidence_of(s.unit, units)).ok:
            return s
    return chosen


def evidence_of(unit: Unit, units: Sequence[Unit]) -> Evidence:
    """A candidate read with what names its subject: a row with its group and its table's caption
    (also a caption the parser cut off as a text quote of the same page); a caption or description
    with the caption; a sentence with its paragraph (where "it" is named). A number the
    question names must be in the candidate itself, or a table's caption ("in 0.5 M H2SO4")."""
    q = unit.quote
    context: list[str] = []
    own = unit.text
    if q.modality == "image":
        captions = [
            u.text
            for u in units
            if u.kind == "sentence"
            and u.quote.kind == "caption"
            and u.quote.page_idx == q.page_idx
            and u.quote.doc_id == q.doc_id
        ]
        caption = caption_of(q)
        context += [caption, where(q), *captions]
        own = f"{unit.text}\n{caption}"
        if unit.row is not None:
            context.append(unit.row.group)
    if unit.paragraph:  # its paragraph: where the subject of "They cost between $2900 and $4500" is named
        context.append(unit.paragraph)
    return Evidence(unit.text, "\n".join(c for c in context if c), q.doc_id, q.doc_name, q.doc_title or "", own)


# -- writing ---------------------------------------------------------------------------------------


def _without_repeats(ranked: list[Scored]) -> list[Scored]:
    """A sentence two quotes share (a caption parsed as a text quote too, a sentence a describer
    quoted from the page) is kept once, where it scores best."""
    seen: set[str] = set()
    out = []
    for s in ranked:
        key = fold(LEAD_IN.sub("", s.unit.text))
        if key in seen:
            continue
        seen.add(key)
        out.append(s)
    return out


def _more_from_quote(answer: PartAnswer, units: Sequence[Unit], relevance: Relevance, taken: set[int]) -> list[Scored]:
    """The answering sentence, then sentences of its quote that answer the same part, score near it
    and add a word or anchor of the question's not yet written; in the quote's order after the first."""
    top = answer.chosen
    assert top is not None
    chosen = [top]
    terms, cues = set(top.terms), set(top.anchors)
    for s in answer.ranked:
        if len(chosen) >= MAX_PER_QUOTE or s.score < SAME_QUOTE_RELATIVE * top.score:
            break
        if s is top or s.unit.quote is not top.unit.quote or id(s.unit) in taken or s.unit.kind != "sentence":
            continue
        if not (s.terms - terms or s.anchors - cues):
            continue
        if relevance.check(answer.part, evidence_of(s.unit, units)).ok:
            chosen.append(s)
            terms |= s.terms
            cues |= s.anchors
    return [top, *sorted(chosen[1:], key=lambda s: s.unit.position)]


def write(
    answers: list[PartAnswer],
    units: Sequence[Unit],
    relevance: Relevance,
    figures: dict[tuple[str, str], ContextQuote],
    max_words: int,
) -> str:
    """Each part's sentences in the question's order (a sentence answering two parts once), each
    cited; a part nothing answers said missing. Sentences are added while the answer stays within
    `max_words`."""
    out: list[str] = []
    placed: dict[int, int] = {}
    words = 0
    taken: set[int] = set()
    for answer in answers:
        text = True
        if answer.chosen is None:
            lines = [abstention(answer.part.text, answer.reason)]
        elif id(answer.chosen.unit) in taken:
            continue
        else:
            group = _more_from_quote(answer, units, relevance, taken)
            taken.update(id(s.unit) for s in group)
            text = group[0].unit.quote.modality == "text"
            lines = _text_lines(group, figures) if text else [_image_line(answer, units)]
        for line in lines:
            n = len(line.split())
            if not out and n > max_words:
                line, n = _cut(line, max_words), max_words
            if n and words + n <= max_words:
                add_placing_once(out, placed, line, image_line=not text)
                words += n
    return " ".join(out)


def _text_lines(group: list[Scored], figures: dict[tuple[str, str], ContextQuote]) -> list[str]:
    """Each sentence cited `[i]`; a sentence naming a figure or table of the context ("as Figure 2
    shows") has that image placed right after it."""
    q = group[0].unit.quote
    out = []
    for s in group:
        body, end = _split_end(s.unit.text)
        named = [figures.get((q.doc_id, fold(m.group(0)))) for m in LABEL.finditer(s.unit.text)]
        marks = "".join(f" ![{image_alt(i)}](image{i.number})" for i in dict.fromkeys(n for n in named if n))
        out.append(f"{body} [{q.number}]{end}{marks}")
    return out


def _image_line(answer: PartAnswer, units: Sequence[Unit]) -> str:
    """One sentence and the image right after it: a table's cell(s) with their labels (and the
    row compared with), the caption's or the description's sentence that answers, or the figure
    named with the labels that answer quoted."""
    chosen = answer.chosen
    assert chosen is not None
    q = chosen.unit.quote
    image = f" ![{image_alt(q)}](image{q.number})"
    if chosen.unit.row is not None:
        rows = [u.row for u in units if u.quote is q and u.row is not None]
        legend = "\n".join(t for t in (q.caption, q.ocr_text or q.text) if t)
        sentence = cell_sentence(where(q), rows, chosen.unit.row, answer.part, answer.compared, answer.difference)
        sentence += f", {answer.extreme}" if answer.extreme else ""
        cells = [c for r in (chosen.unit.row, *answer.compared) for c in r.cells]
        body, end = _split_end(escape_marks(with_legend(sentence, legend, cells)))  # a cell's "[18]" is no citation
    elif answer.labels_only:
        caption = caption_of(q)
        named = caption if caption and LABEL.match(caption) else f"{where(q)}{': ' + caption if caption else ''}"
        body, end = _split_end(f"{_split_end(escape_marks(named))[0]} — its labels read “{chosen.unit.text}”")
    else:
        body, end = _split_end(chosen.unit.text)
    # one sentence: the full stops of "Inf. F1-score" must not end it before the image
    return f"{keep_together(body)}{end}{image}"


def _split_end(text: str) -> tuple[str, str]:
    """A sentence and its closing punctuation (a full stop where it had none)."""
    text = text.rstrip()
    if text and text[-1] in ".!?":
        return text[:-1].rstrip(), text[-1]
    return text, "."


def _cut(line: str, max_words: int) -> str:
    """A first sentence longer than the whole answer may be: its head, then its citation."""
    mark = re.search(r"\s(\[\d+\]\.?|!\[[^\]]*\]\(image\d+\))$", line)
    tail = mark.group(1) if mark else ""
    budget = max_words - len(tail.split())
    return " ".join(line.split()[:budget]) + " … " + tail
