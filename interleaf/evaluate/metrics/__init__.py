"""The evaluate stage's metrics: pure functions over per-question records (records.py), each
following a paper's definition (the module docstrings cite the section).

- selection.py: MMDocRAG quote selection (overall F1 per question; text / image P, R, F1 micro)
- overlap.py: MMDocRAG BLEU and ROUGE-L, sacreBLEU corpus BLEU
- judge.py: LLM-as-judge plumbing and MMDocRAG's five 0-5 criteria
- mcitebench.py: Citation F1 (judge), Source F1 and Exact Match
- mavis.py: groundedness recall / precision, completeness, relevance (judge), utilisation
- correctness.py: answer_correct, abstention recall, false abstention, words, relevance share
- citation_sets.py: the cited quotes read as eval_all.py reads them and as Interleaf repairs them
- grounding.py: the citation checker's verdicts aggregated, short-answer number recall
- retrieval.py: recall@k and NDCG@k over ranked lists
- score.py: `score_questions`, `aggregate`, `score_answers`
"""

from interleaf.evaluate.metrics.records import (
    ByModality,
    MetricValue,
    QuestionRecord,
    QuestionScores,
    cited_from_answer,
)
from interleaf.evaluate.metrics.retrieval import ndcg_at_k, ranked_lists, recall_at_k, retrieval_metrics
from interleaf.evaluate.metrics.score import (
    JUDGE_FAMILIES,
    aggregate,
    judge_prompt_hashes,
    score_answers,
    score_questions,
)

__all__ = [
    "JUDGE_FAMILIES",
    "ByModality",
    "MetricValue",
    "QuestionRecord",
    "QuestionScores",
    "aggregate",
    "cited_from_answer",
    "judge_prompt_hashes",
    "ndcg_at_k",
    "ranked_lists",
    "recall_at_k",
    "retrieval_metrics",
    "score_answers",
    "score_questions",
]
