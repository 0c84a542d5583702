"""The offline expander on the real dev questions: clauses keep the evidence cues."""

from __future__ import annotations

from interleaf.expand.config import ExpandConfig
from interleaf.expand.rules import RulesExpander, anchors


def test_every_question_keeps_itself_first(qa_items: list[dict]) -> None:
    expander = RulesExpander(ExpandConfig())
    for item in qa_items:
        clauses = expander.expand(item["question"])
        assert clauses[0].kind == "question" and clauses[0].text == item["question"].strip()
        assert len(clauses) <= ExpandConfig().max_clauses
        assert len({c.text.casefold() for c in clauses}) == len(clauses)


def test_compound_question_splits_and_keeps_references() -> None:
    q = (
        "According to Figure 3 and Section 5.4 of the MAVIS paper, at how many retrieved documents does "
        "groundedness peak, and what gain over retrieving 5 documents is reported?"
    )
    clauses = RulesExpander(ExpandConfig()).expand(q)
    parts = [c.text for c in clauses if c.kind == "part"]
    assert len(parts) == 2 and parts[1].startswith("what gain")
    assert "MAVIS" in parts[1]  # the subject travels with the part that lost it
    assert any(c.kind == "reference" and c.text == "Figure 3 Section 5.4" for c in clauses)


def test_anchors_are_whole_cues() -> None:
    cues = anchors("In Table 2 of the DPR paper (see Table 5), on which dataset does BM25 beat GPT-4.1 by 7.4 points?")
    assert cues[:2] == ["Table 2", "DPR"]
    assert "Table 5" in cues and "BM25" in cues and "GPT-4.1" in cues and "7.4" in cues
    assert "Table" not in cues and "5" not in cues


def test_between_comparison_gives_one_clause_per_side() -> None:
    clauses = RulesExpander(ExpandConfig()).expand("What is the difference in F1 between Qwen3-8B and GPT-4o?")
    texts = [c.text for c in clauses if c.kind == "part"]
    assert any("Qwen3-8B" in t and "GPT-4o" not in t for t in texts)
    assert any("GPT-4o" in t and "Qwen3-8B" not in t for t in texts)
