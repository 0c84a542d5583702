"""The two citation parsings, named apart: `mmdocrag` exactly as MMDocRAG's eval_all.py reads a
response, `repaired` as Interleaf's citation module reads it. Hand-written answers in the forms the
released MMDocRAG responses hold, each where the two differ. (The mode was checked against
eval_all.py's own code on the released answers of three models; the counts are in the issue's
closing note, not here: their files stay out of the repository.)"""

from __future__ import annotations

from dataclasses import replace

from interleaf.evaluate.metrics import ByModality, aggregate, cited_from_answer, score_questions
from interleaf.evaluate.metrics.citation_sets import mmdocrag_labels, repaired_labels, without_thinking
from interleaf.evaluate.metrics.records import invalid_citation_id
from tests.support.metrics_records import quote, record


def test_grouped_citations_count_only_when_repaired() -> None:
    answer = "Both retrievers gain from in-batch negatives [1,9] and from more data [2, 3]."
    assert mmdocrag_labels(answer) == ((), ())
    assert repaired_labels(answer) == (("text1", "text9", "text2", "text3"), ())


def test_an_image_named_in_prose_counts_only_when_repaired() -> None:
    answer = "Image 4 shows the accuracy curve, and ![the table](image2) lists the figures [5]."
    assert mmdocrag_labels(answer) == (("text5",), ("image2",))
    assert repaired_labels(answer) == (("text5",), ("image4", "image2"))


def test_a_bare_image_in_parentheses_counts_in_both() -> None:
    # eval_all.py's `\(image(\d+)\)` needs no `![...]`; Interleaf reads it through its repair
    answer = "The chart (image5) shows a rise of 12% [2]."
    assert mmdocrag_labels(answer) == (("text2",), ("image5",))
    assert repaired_labels(answer) == (("text2",), ("image5",))


def test_thinking_is_removed_as_eval_all_removes_it() -> None:
    response = "<think>maybe [7] or (image1)</think>\n\nIt is 42 [2].\n\nDone</think>\n\nlater [3]"
    # `split("</think>\n\n")[1]`: what lies between the first marker and the next one
    assert without_thinking(response) == "It is 42 [2].\n\nDone"
    assert mmdocrag_labels(response) == (("text2",), ())
    assert without_thinking("Thought for 12 seconds\n\nThe answer [4].") == "The answer [4]."
    assert without_thinking("") == " " and mmdocrag_labels(None) == ((), ())
    # digits are kept as written: [01] is text01, which matches no quote
    assert mmdocrag_labels("see [01] and [1]") == (("text01", "text1"), ())


def test_both_parsings_are_scored_side_by_side() -> None:
    context = [
        quote("t1", "text", 1, "DPR reaches 78.4 top-20 accuracy on NQ."),
        quote("t9", "text", 9, "BM25 reaches 59.1 top-20 accuracy on NQ."),
        quote("i4", "image", 4, "Top-k accuracy curves"),
    ]
    answer = "DPR beats BM25 on NQ, 78.4 against 59.1 [1,9]. Image 4 shows the curves [01]."
    gold = ByModality(("t1", "t9"), ("i4",))
    r = replace(
        record("q", context, answer, gold), cited_mmdocrag=cited_from_answer(answer, tuple(context), "mmdocrag")
    )
    assert r.cited.all == ("t1", "t9", "i4")  # `[01]` is read as [1] once repaired
    assert r.cited_mmdocrag is not None
    assert r.cited_mmdocrag.all == (invalid_citation_id("text", "01"),)
    metrics = {m.name: m.value for m in aggregate(score_questions([r]), judged=False)}
    # repaired: every gold quote cited and nothing else -> F1 1; official: one citation, of no quote -> 0
    assert metrics["quote_f1"] == 1.0
    assert metrics["quote_f1_mmdocrag"] == 0.0
    assert metrics["citations_parsed_alike"] == 0.0
