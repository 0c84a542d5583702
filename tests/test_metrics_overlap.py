"""BLEU and ROUGE-L as MMDocRAG computes them (eval_all.py), sacreBLEU's corpus BLEU; expected values
worked by hand."""

from __future__ import annotations

import pytest

from interleaf.evaluate.metrics import QuestionRecord, aggregate, score_questions
from interleaf.evaluate.metrics.overlap import bleu, corpus_sacrebleu, nltk_tokens, rouge_l
from interleaf.evaluate.metrics.records import ByModality


def test_sentence_final_periods_are_split_off_inside_the_text() -> None:
    # as the reference's punkt-split word_tokenize; word_tokenize(text, preserve_line=True) would keep "sat."
    assert nltk_tokens("The cat sat. It was 5.3% [2].") == [
        "The",
        "cat",
        "sat",
        ".",
        "It",
        "was",
        "5.3",
        "%",
        "[",
        "2",
        "]",
        ".",
    ]


def test_bleu_is_nltk_sentence_bleu_4_without_smoothing() -> None:
    # ref  The cat sat . It was on the mat .   cand  The cat sat . It was on a mat .   (10 tokens each, BP = 1)
    # 1-grams 9/10 (all but "a"); 2-grams 7/9 (not "on a", "a mat"); 3-grams 5/8; 4-grams 4/7
    # BLEU = (9/10 * 7/9 * 5/8 * 4/7) ** (1/4) = (1260 / 5040) ** 0.25 = 0.25 ** 0.25 = 0.70711
    assert bleu("The cat sat. It was on the mat.", "The cat sat. It was on a mat.") == pytest.approx(0.25**0.25)
    # no 4-gram in common and no smoothing: 0 (NLTK returns a float underflow, ~1e-154), however many
    # words match
    assert bleu("a b c d e", "a b x d e") == pytest.approx(0.0, abs=1e-100)
    assert bleu("a b c d e", "") == 0.0


def test_rouge_l_uses_the_stemmer_and_f_measure() -> None:
    # stemmed: ref the cat sat on the mat / cand the cat sit on a mat: LCS "the cat on mat" = 4
    # P = 4/6, R = 4/6, F = 2/3 ("cats" matches "cat" only through the stemmer)
    assert rouge_l("the cats sat on the mat", "the cat sitting on a mat") == pytest.approx(2 / 3)
    # citations are words of the raw Markdown: ref revenue grew 12 1 / cand revenue grew 12
    # LCS 3: P = 3/3, R = 3/4, F = 2 * 0.75 / 1.75 = 6/7
    assert rouge_l("Revenue grew 12% [1].", "Revenue grew 12%.") == pytest.approx(6 / 7)


def test_corpus_sacrebleu_pools_counts_over_the_corpus() -> None:
    # pair 1: the cat sat on the mat / the cat sat on a mat: matches 5/6, 3/5, 2/4, 1/3
    # pair 2: a b c d / a b c d: 4/4, 3/3, 2/2, 1/1
    # pooled: 9/10, 6/8, 4/6, 2/4; lengths 10 = 10, BP = 1
    # BLEU = (0.9 * 0.75 * 2/3 * 0.5) ** 0.25 = 0.225 ** 0.25 = 0.68872
    got = corpus_sacrebleu(["the cat sat on a mat", "a b c d"], ["the cat sat on the mat", "a b c d"])
    assert got == pytest.approx(0.225**0.25)


def test_aggregate_averages_over_questions_with_a_reference() -> None:
    def record(qid: str, answer: str, reference: str | None) -> QuestionRecord:
        return QuestionRecord(qid, "q?", ByModality(), ByModality(), (), answer, reference_answer=reference)

    records = [
        record("q1", "the cat sat on a mat", "the cat sat on the mat"),
        record("q2", "a b c d", "a b c d"),
        record("q3", "no reference here", None),
    ]
    got = {m.name: m for m in aggregate(score_questions(records), judged=False)}
    # BLEU: pair 1 (5/6 * 3/5 * 2/4 * 1/3) ** 0.25 = (1/12) ** 0.25 = 0.53728, pair 2 = 1; mean 0.76864
    assert got["bleu"].value == pytest.approx(((1 / 12) ** 0.25 + 1) / 2)
    assert got["bleu"].n == 2
    # ROUGE-L: pair 1 LCS 5 of 6 each way: F = 5/6; pair 2: 1; mean 11/12
    assert got["rouge_l"].value == pytest.approx(11 / 12)
    assert got["sacrebleu"].value == pytest.approx(0.225**0.25)
    none = {m.name: m for m in aggregate(score_questions(records[2:]), judged=False)}
    assert none["bleu"].value is None and none["bleu"].n == 0
