"""Surface similarity to the reference answer: BLEU and ROUGE-L as MMDocRAG computes them (§4.1;
Appendix A.2 eq. 2-3; the reference code's eval_all.py), so figures compare with its Table 3, and
sacreBLEU's corpus BLEU beside them.

- BLEU: NLTK `sentence_bleu`, one reference, up to 4-grams with equal weights, no smoothing, over
  NLTK word tokens of the raw Markdown (citations included), averaged over questions. Without
  smoothing a pair sharing no 4-gram scores 0.
- ROUGE-L: `rouge_score`'s rougeL with the Porter stemmer, F-measure (β = 1), averaged over questions.
- sacreBLEU: one corpus-level BLEU over all pairs (13a tokenizer, exponential smoothing), on the
  same 0-1 scale as the others (sacreBLEU's score / 100).

Offline tokenization: the reference's `word_tokenize(text)` first splits sentences with the
pretrained Punkt model, which needs a data download. We split with an untrained
`PunktSentenceTokenizer` (no data) and run `word_tokenize(sentence, preserve_line=True)` on each,
which is what `word_tokenize` does internally. Calling `word_tokenize(text, preserve_line=True)` on
the whole text instead would leave every sentence-final period inside the text glued to its word
("rose." rather than "rose", "."). The remaining difference: the untrained splitter also splits
after abbreviations the pretrained model knows ("e.g.", "Dr."), so a few tokens differ.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence

from interleaf.evaluate.metrics.records import MetricValue, QuestionRecord, QuestionScores


@functools.cache
def _sentence_splitter():  # -> PunktSentenceTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


def nltk_tokens(text: str) -> list[str]:
    from nltk.tokenize import word_tokenize

    return [t for s in _sentence_splitter().tokenize(text) for t in word_tokenize(s, preserve_line=True)]


def bleu(reference: str, candidate: str) -> float:
    """MMDocRAG's `calculate_bleu`: NLTK sentence BLEU-4, equal weights, no smoothing."""
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():  # NLTK warns on every pair with a zero n-gram count; the score is 0
        warnings.simplefilter("ignore")
        return float(sentence_bleu([nltk_tokens(reference)], nltk_tokens(candidate)))


@functools.cache
def _rouge_scorer():  # -> rouge_scorer.RougeScorer
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(reference: str, candidate: str) -> float:
    """MMDocRAG's `calculate_rouge`: rougeL F-measure with the stemmer (target = reference)."""
    return float(_rouge_scorer().score(reference, candidate)["rougeL"].fmeasure)


def corpus_sacrebleu(candidates: Sequence[str], references: Sequence[str]) -> float:
    """sacreBLEU's corpus BLEU (defaults: 13a, exp smoothing), scaled to 0-1."""
    import sacrebleu

    return float(sacrebleu.corpus_bleu(list(candidates), [list(references)]).score) / 100


def question_overlap(record: QuestionRecord) -> tuple[dict[str, float | None], tuple[str, str] | None]:
    if record.reference_answer is None:
        return {"bleu": None, "rouge_l": None}, None
    # the reference replaces an empty response by " " (eval_all.py); the scores are then 0 either way
    answer = record.answer_markdown or " "
    pair = (answer, record.reference_answer)
    return {"bleu": bleu(record.reference_answer, answer), "rouge_l": rouge_l(record.reference_answer, answer)}, pair


def aggregate_overlap(scores: Sequence[QuestionScores]) -> list[MetricValue]:
    pairs = [s.overlap_pair for s in scores if s.overlap_pair is not None]
    if not pairs:
        note = "no reference answer (QuestionRecord.reference_answer) to compare with"
        return [MetricValue(name, None, 0, note) for name in ("bleu", "rouge_l", "sacrebleu")]
    n = len(pairs)
    note = f"averaged over {n} questions with a reference answer (MMDocRAG eval_all.py)"
    return [
        MetricValue("bleu", sum(s.values["bleu"] or 0.0 for s in scores if s.overlap_pair) / n, n, note),
        MetricValue("rouge_l", sum(s.values["rouge_l"] or 0.0 for s in scores if s.overlap_pair) / n, n, note),
        MetricValue(
            "sacrebleu",
            corpus_sacrebleu([a for a, _ in pairs], [r for _, r in pairs]),
            n,
            "corpus BLEU (sacreBLEU defaults: 13a, exp smoothing) / 100",
        ),
    ]
