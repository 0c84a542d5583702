"""The LLM expander on a tiny random Qwen2 built here: prompt rendering, generation plumbing by path,
the parser on canned outputs, and the fallback to the offline clauses when the output is garbage."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from interleaf.expand.config import ExpandConfig, LLMConfig
from interleaf.expand.llm import LLMExpander, parse_queries, usable
from interleaf.expand.rules import RulesExpander
from tests.tiny_models import build_causal_lm

QUESTION = "What revenue growth does Table 3 report for 2023, and which figure shows the trend?"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_causal_lm(tmp_path_factory.mktemp("tiny-lm"), [QUESTION, "search queries about a document"])


def _config(model: Path | str = "unused-by-this-test") -> ExpandConfig:
    return ExpandConfig(backend="llm", llm=LLMConfig(model=str(model), max_new_tokens=12))


def test_parser_reads_quoted_queries_and_drifting_lists() -> None:
    assert parse_queries('"revenue growth Table 3", "revenue trend figure", "2023 revenue"', 2) == [
        "revenue growth Table 3",
        "revenue trend figure",
    ]
    assert parse_queries("1. revenue growth in 2023\n2. figure of the revenue trend\n", 3) == [
        "revenue growth in 2023",
        "figure of the revenue trend",
    ]


def test_usable_keeps_queries_about_the_question_only() -> None:
    assert usable("Table 3 revenue growth 2023", QUESTION)
    assert not usable("zebra quantum harmonica", QUESTION)  # shares no term
    assert not usable("revenue", QUESTION)  # one word
    assert not usable("## )) revenue ;; %% 77 ** growth @@ ~~ ^^", QUESTION)  # mostly symbols


def test_canned_output_becomes_clauses_after_the_question() -> None:
    expander = LLMExpander(_config())
    clauses = expander.clauses_from_output(QUESTION, '"Table 3 revenue growth 2023", "figure revenue trend"')
    assert [c.kind for c in clauses] == ["question", "llm", "llm"]
    assert clauses[0].text == QUESTION and clauses[1].text == "Table 3 revenue growth 2023"


def test_garbage_output_falls_back_to_the_offline_clauses() -> None:
    expander = LLMExpander(_config())
    offline = RulesExpander(_config()).expand(QUESTION)
    assert expander.clauses_from_output(QUESTION, "\n\n)) ## ..\n") == offline
    assert len(offline) > 1  # the fallback is the real decomposition, not the bare question


def test_tiny_model_loads_by_path_renders_the_prompt_and_generates(tiny_lm: Path) -> None:
    expander = LLMExpander(_config(tiny_lm))
    _, tokenizer = expander._load()
    prompt = expander.render(QUESTION, tokenizer)
    assert prompt.startswith("<|im_start|>user\n") and prompt.endswith("<|im_start|>assistant\n")
    assert QUESTION in prompt and "generate 3 search queries" in prompt
    output = expander.generate(QUESTION)
    # the output is the model's greedy continuation of exactly that prompt, new tokens only: computed
    # here through transformers directly from the rendered prompt
    model, _ = expander._load()
    prompt_ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    continued = model.generate(**prompt_ids, max_new_tokens=12, do_sample=False)[0, prompt_ids["input_ids"].shape[1] :]
    assert 0 < len(continued) <= 12
    assert output == tokenizer.decode(continued, skip_special_tokens=True)
    assert QUESTION not in output  # the prompt is not echoed into the queries
    assert expander.generate(QUESTION) == output  # greedy decoding: the same text twice
    # whatever random weights produce, expand() is exactly the parse of that output (or the fallback)
    clauses = expander.expand(QUESTION)
    assert clauses == expander.clauses_from_output(QUESTION, output)
    assert clauses[0].text == QUESTION


def test_config_refuses_options_that_would_do_nothing() -> None:
    with pytest.raises(ValidationError, match=r"needs expand\.llm\.model"):
        ExpandConfig(backend="llm")
    with pytest.raises(ValidationError, match="keyword"):  # a misspelt clause kind is not silently ignored
        ExpandConfig.model_validate({"weights": {"keyword": 0.5}})
    weights = ExpandConfig.model_validate({"weights": {"keywords": 0.9}}).weights
    assert (weights.keywords, weights.question) == (0.9, 1.0)


def test_weights_reach_the_clauses() -> None:
    config = ExpandConfig.model_validate({"weights": {"question": 2.0, "keywords": 0.25, "reference": 0.125}})
    by_kind = {c.kind: c.weight for c in RulesExpander(config).expand(QUESTION)}
    assert by_kind["question"] == 2.0 and by_kind["keywords"] == 0.25 and by_kind["reference"] == 0.125
    llm = LLMExpander(ExpandConfig(backend="llm", llm=LLMConfig(model="unused"), weights={"llm": 0.4}))
    assert [c.weight for c in llm.clauses_from_output(QUESTION, '"Table 3 revenue growth 2023"')] == [1.0, 0.4]
