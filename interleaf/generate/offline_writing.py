"""The offline composer's writing: each part's chosen candidate as cited sentences, in the question's
order, within the answer's word budget; a table row as its cells under their labels
(table_cells.py), a figure placed right after the sentence it supports (MMDocRAG §3, Appendix E.3
formats), more sentences of an answering quote where they answer the same part."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from interleaf.evidence import fold
from interleaf.generate.abstain import abstention
from interleaf.generate.asking import Part
from interleaf.generate.citations import add_placing_once, image_alt
from interleaf.generate.continued_lists import list_goes_on
from interleaf.generate.differences import Difference
from interleaf.generate.offline_scoring import Scored
from interleaf.generate.offline_units import LABEL, LEAD_IN, Unit, caption_of, escape_marks, where
from interleaf.generate.part_answer import PartAnswer, evidence_of
from interleaf.generate.protocol import ContextQuote
from interleaf.generate.relevance import Relevance
from interleaf.generate.sentences import keep_together
from interleaf.generate.table_cells import cell_sentence, with_legend
from interleaf.generate.totals import Total

# More sentences from an answering quote: those answering the same part and scoring at least this
# share of its best, at most this many. Set by reading before the relevance test existed, on qa_dev
# (quote-selection F1 / number recall from 0.833 / 0.810): 0.6: 0.833/0.783; at most 4: 0.833/0.737.
SAME_QUOTE_RELATIVE = 0.5
MAX_PER_QUOTE = 6


def without_repeats(ranked: list[Scored]) -> list[Scored]:
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
    continued: Mapping[str, str] | None = None,
) -> str:
    """Each part's sentences in the question's order (a sentence answering two parts once), each
    cited; a part nothing answers said missing; a list the next page goes on with, with the items
    that continue it (`continued`: quote id -> the quote continuing it, continued_lists.py).
    Sentences are added while the answer stays within `max_words`."""
    out: list[str] = []
    placed: dict[int, int] = {}
    words = 0
    taken: set[int] = set()
    written: set[str] = set()
    covered: set[int] = set()  # parts whose cell an earlier sentence gave with its own row's
    for answer in answers:
        text = True
        if answer.chosen is None:
            lines = [abstention(answer.part.text, answer.reason)]
        elif id(answer.part) in covered or (id(answer.chosen.unit) in taken and answer.chosen.unit.row is None):
            continue
        else:  # a row answers each part from the cell of the column that part names, in one sentence
            group = _more_from_quote(answer, units, relevance, taken)
            taken.update(id(s.unit) for s in group)
            text = group[0].unit.quote.modality == "text"
            also = [] if text else _same_row(answer, answers)
            covered.update(id(p) for p in also)
            lines = _text_lines(group, figures, answer.worked_out) if text else [_image_line(answer, units, also)]
            if text and (going_on := list_goes_on([s.unit for s in group], units, continued or {})):
                taken.update(id(u) for u in going_on)
                lines += _text_lines([Scored(u, 0.0, frozenset(), frozenset()) for u in going_on], figures)
            if not text and lines[0] in written:
                continue
            written.update(lines)
        for line in lines:
            n = len(line.split())
            if not out and n > max_words:
                line, n = _cut(line, max_words), max_words
            if n and words + n <= max_words:
                add_placing_once(out, placed, line, image_line=not text)
                words += n
    return " ".join(out)


def _text_lines(
    group: list[Scored], figures: dict[tuple[str, str], ContextQuote], worked_out: Difference | Total | None = None
) -> list[str]:
    """Each sentence cited `[i]`; a sentence naming a figure or table of the context ("as Figure 2
    shows") has that image placed right after it. `worked_out`: what the first sentence's values
    work out to (`_with_worked_out`), written at its end as a table row's is."""
    q = group[0].unit.quote
    out = []
    for s in group:
        body, end = _split_end(s.unit.text)
        if s is group[0]:
            body = _with_worked_out(body, worked_out)
        named = [figures.get((q.doc_id, fold(m.group(0)))) for m in LABEL.finditer(s.unit.text)]
        marks = "".join(f" ![{image_alt(i)}](image{i.number})" for i in dict.fromkeys(n for n in named if n))
        out.append(f"{body} [{q.number}]{end}{marks}")
    return out


def _same_row(answer: PartAnswer, answers: Sequence[PartAnswer]) -> list[Part]:
    """The other parts a plain row lookup answers from the same row as `answer` (none compares,
    works out or ranks it)."""

    def plain(a: PartAnswer) -> bool:
        return a.chosen is not None and a.chosen.unit.row is not None and not (a.compared or a.worked_out or a.extreme)

    if answer.chosen is None or not plain(answer):
        return []
    unit = answer.chosen.unit
    return [a.part for a in answers if a is not answer and plain(a) and a.chosen and a.chosen.unit is unit]


def _image_line(answer: PartAnswer, units: Sequence[Unit], also: Sequence[Part] = ()) -> str:
    """One sentence and the image right after it: a table's cell(s) with their labels (and the
    row compared with), the caption's or the description's sentence that answers, or the figure
    named with the labels that answer quoted."""
    chosen = answer.chosen
    assert chosen is not None
    q = chosen.unit.quote
    image = f" ![{image_alt(q)}](image{q.number})"
    worked_out = answer.worked_out
    if isinstance(worked_out, Difference) and worked_out.elsewhere:  # the other table a value is from: named, placed
        there = next(u.quote for u in units if u.quote.quote_id == worked_out.elsewhere)
        worked_out = replace(worked_out, named=f"{worked_out.named} in {where(there)}")
        image += f" ![{image_alt(there)}](image{there.number})"
    if chosen.unit.row is not None:
        rows = [u.row for u in units if u.quote is q and u.row is not None]
        legend = "\n".join(t for t in (q.caption, q.ocr_text or q.text) if t)
        added = worked_out.columns if isinstance(worked_out, Difference) else ()
        sentence = cell_sentence(where(q), rows, chosen.unit.row, answer.part, answer.compared, worked_out, also, added)
        sentence += f", {answer.extreme}" if answer.extreme else ""
        cells = [c for r in (chosen.unit.row, *answer.compared) for c in r.cells]
        body, end = _split_end(escape_marks(with_legend(sentence, legend, cells)))  # a cell's "[18]" is no citation
    elif answer.labels_only:
        caption = caption_of(q)
        named = caption if caption and LABEL.match(caption) else f"{where(q)}{': ' + caption if caption else ''}"
        body, end = _split_end(f"{_split_end(escape_marks(named))[0]} — its labels read “{chosen.unit.text}”")
    else:  # a sentence of a figure's description or of text columns read from an image
        body, end = _split_end(chosen.unit.text)
        body = _with_worked_out(body, worked_out)
    # one sentence: the full stops of "Inf. F1-score" must not end it before the image
    return f"{keep_together(body)}{end}{image}"


def _with_worked_out(body: str, worked_out: Difference | Total | None) -> str:
    """A sentence with what its values work out to written at its end (a difference:
    differences.sentence_difference; a total: totals.py), as a table row's is: the short answer
    gives it, so the answer states it beside the values it comes from."""
    return f"{body}, {worked_out.written()}" if worked_out is not None else body


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
