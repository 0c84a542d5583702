"""The answer-level verdict: does a whole answer address the question, each part of it answered by a
sentence whose cited quotes back it (relevance.py reads each sentence against the part, value_check.py
checks its value under its labels), or said missing?"""

from __future__ import annotations

from collections.abc import Sequence

from interleaf.generate.abstain import says_missing
from interleaf.generate.asking import Part
from interleaf.generate.offline_units import caption_of
from interleaf.generate.protocol import CheckedSentence, Citation, ContextQuote, Verdict
from interleaf.generate.relevance import Evidence, Relevance, holds, quote_text
from interleaf.generate.sentences import IMAGE_MARK, content_words, strip_marks


def answer_verdict(question: str, sentences: Sequence[CheckedSentence], quotes: Sequence[ContextQuote]) -> Verdict:
    relevance = Relevance(question, quotes)
    parts = relevance.parts
    if not parts:
        return Verdict(False, False, "no question")
    by_id = {q.quote_id: q for q in quotes}
    texts = [strip_marks(IMAGE_MARK.sub(lambda m: f" {m.group(1)} ", s.text)) for s in sentences]
    missing_idx = [i for i, t in enumerate(texts) if says_missing(t)]
    outcomes: list[str] = []
    states: list[str] = []
    for n, part in enumerate(parts, start=1):
        answered: list[str] = []
        why = ""
        for i, sentence in enumerate(sentences):
            if i in missing_idx:
                continue
            cited = [by_id[c.quote_id] for c in sentence.citations if c.quote_id in by_id]
            # a cited table is read with a caption the parser cut off as a text quote of its page
            pages = {(q.doc_id, q.page_idx) for q in cited if q.modality == "image"}
            cut_off = [q for q in quotes if q.kind == "caption" and (q.doc_id, q.page_idx) in pages]
            context = "\n".join(quote_text(q) for q in [*cited, *cut_off])
            doc = cited[0] if cited else None
            # a number the question names may be in a cited table's caption ("in 1.2 M HNO3")
            own = "\n".join([texts[i], *(caption_of(q) for q in cited if q.modality == "image")])
            evidence = Evidence(
                texts[i],
                context,
                doc.doc_id if doc else "",
                doc.doc_name if doc else "",
                (doc.doc_title or "") if doc else "",
                own,
            )
            finding = relevance.check(part, evidence)
            if finding.ok and (cited or not quotes) and sentence.values_backed:
                answered += [c_label(c) for c in sentence.citations] or ["(no citation)"]
            elif not why and finding.ok and cited:
                # its value is not what its quotes say (value_check.py): an answer, but not one to count
                why = "the value its sentence gives is not in the quotes it cites, under the labels it gives it"
            elif not why:
                why = finding.why if cited else "no sentence that cites a quote answers it"
        said = [i for i in missing_idx if _about(texts[i], part, len(parts))]
        if answered:
            states.append("answered")
            outcomes.append(f"part {n} answered {''.join(dict.fromkeys(answered))}")
        elif said:
            states.append("missing")
            outcomes.append(f"part {n} said missing")
        else:
            states.append("no")
            outcomes.append(f"part {n} not answered: {why or 'no sentence answers it'}")
    label = outcomes if len(parts) > 1 else [o.replace("part 1 ", "", 1) for o in outcomes]
    return Verdict("no" not in states, all(s == "missing" for s in states), "; ".join(label))


def c_label(citation: Citation) -> str:
    return f"[{citation.number}]" if citation.modality == "text" else f"image{citation.number}"


def _about(sentence: str, part: Part, n_parts: int) -> bool:
    """An abstention sentence speaks of this part: the only part, or it shares its words or names."""
    if n_parts == 1:
        return True
    words = set(content_words(sentence))
    return bool(words & (part.focus | set(content_words(part.text)))) or any(holds(a, sentence) for a in part.anchors)
