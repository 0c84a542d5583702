"""The answer fit's ceiling: the share of answerable questions some candidate answers, per set."""

import numpy as np

from benchmarks.fit_answer_ranker import ceiling


def test_ceiling_counts_answerable_questions_with_a_candidate_holding_the_answer() -> None:
    # set a: q1 has a right candidate, q2 none, q3 is unanswerable (left out); set b: q4 has none
    # of its candidates kept at all (an empty context), so it is answerable and unanswered
    questions = np.array(["a:q1", "a:q1", "a:q2", "a:q3"])
    y = np.array([0, 1, 0, 0])
    answerable = {"a:q1": True, "a:q2": True, "a:q3": False, "b:q4": True}
    assert ceiling(y, questions, answerable) == {
        "a": {"answerable": 2, "some_candidate_holds_it": 0.5},
        "b": {"answerable": 1, "some_candidate_holds_it": 0.0},
    }
