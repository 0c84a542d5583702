"""LLM expander: a local causal LM writes N search queries (RefLVQA Table 14's instruction, with
MMDocRAG §4.8's multi-clause decomposition spelled out in prompts/expand_query.md).

The question itself always stays clause 0, so a model that answers nonsense costs recall nothing
that the offline clauses would not also cost.
"""

from __future__ import annotations

import os
import re
from typing import Any

from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Clause
from interleaf.expand.rules import dedupe
from interleaf.prompts import load_prompt

_QUOTED = re.compile(r'"([^"\n]{3,200})"')


def parse_queries(text: str, n: int) -> list[str]:
    """'"q1", "q2"' as asked; falls back to one query per line or comma for models that drift."""
    found = _QUOTED.findall(text)
    if not found:
        found = [p.strip(" -*•\t'\"0123456789.)") for p in re.split(r"[\n,;]", text)]
    return [q.strip() for q in found if len(q.strip()) >= 3][:n]


class LLMExpander:
    name = "llm"

    def __init__(self, config: ExpandConfig, model: Any = None, tokenizer: Any = None) -> None:
        self.config = config
        self.prompt = load_prompt("expand_query")
        self._model, self._tokenizer = model, tokenizer

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            spec = self.config.llm
            if not spec.model:
                raise ValueError("expand.backend=llm needs expand.llm.model (an id or a local path)")
            path = os.path.expanduser(spec.model)
            kwargs = {"gguf_file": spec.gguf_file} if spec.gguf_file else {}
            self._tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
            self._model = AutoModelForCausalLM.from_pretrained(path, **kwargs).eval()
        return self._model, self._tokenizer

    def generate(self, question: str) -> str:
        import torch

        model, tokenizer = self._load()
        text = self.prompt.render(n=self.config.llm.n_queries, question=question)
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
        inputs = tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=self.config.llm.max_new_tokens, do_sample=False)
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)

    def expand(self, question: str) -> list[Clause]:
        weight = self.config.weights.get("llm", 0.7)
        clauses = [Clause(question.strip(), "question", self.config.weights.get("question", 1.0))]
        clauses += [Clause(q, "llm", weight) for q in parse_queries(self.generate(question), self.config.llm.n_queries)]
        return dedupe(clauses)[: self.config.max_clauses]
