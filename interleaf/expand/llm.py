"""LLM expander: a local causal LM writes N search queries (RefLVQA Table 14's instruction, with
MMDocRAG §4.8's multi-clause decomposition spelled out in prompts/expand_query.md).

The question itself always stays clause 0. Generated queries that do not look like queries about
this question (too few words, mostly symbols, no term shared with it) are dropped, and when none is
left the offline clauses are used instead: a small or badly prompted model then costs no recall.
"""

from __future__ import annotations

import os
import re
from typing import Any

from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Clause
from interleaf.expand.rules import RulesExpander, dedupe
from interleaf.prompts import load_prompt
from interleaf.text.tokens import tokenize

_QUOTED = re.compile(r'"([^"\n]{3,200})"')
_MARKER = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,2}[.)])\s*")


def parse_queries(text: str, n: int) -> list[str]:
    """'"q1", "q2"' as asked; falls back to one query per line or comma for models that drift."""
    found = _QUOTED.findall(text)
    if not found:
        # list markers go ("1.", "-", "*"), numbers inside a query stay ("2023", "Table 3")
        found = [_MARKER.sub("", p).strip(" \t'\"") for p in re.split(r"[\n,;]", text)]
    return [q.strip() for q in found if len(q.strip()) >= 3][:n]


_WORD = re.compile(r"[^\W\d_]{2,}")


def usable(query: str, question: str) -> bool:
    """A search query for this question: two words or more, mostly letters, a term shared with it."""
    if len(_WORD.findall(query)) < 2:
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in query) / len(query)
    return letters >= 0.6 and bool(set(tokenize(query)) & set(tokenize(question)))


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
            if not spec.model:  # ExpandConfig refuses backend llm without one; a direct caller may not
                raise ValueError("the LLM expander needs expand.llm.model (an id or a local path)")
            path = os.path.expanduser(spec.model)
            kwargs = {"gguf_file": spec.gguf_file} if spec.gguf_file else {}
            self._tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
            self._model = AutoModelForCausalLM.from_pretrained(path, **kwargs).to(spec.device).eval()
        return self._model, self._tokenizer

    def render(self, question: str, tokenizer: Any) -> str:
        """The prompt as the model sees it: through its chat template when it has one."""
        text = self.prompt.render(n=self.config.llm.n_queries, question=question)
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
        return text

    def generate(self, question: str) -> str:
        import torch

        model, tokenizer = self._load()
        templated = bool(getattr(tokenizer, "chat_template", None))  # the template already holds the specials
        inputs = tokenizer(self.render(question, tokenizer), return_tensors="pt", add_special_tokens=not templated)
        inputs = inputs.to(model.device)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=self.config.llm.max_new_tokens, do_sample=False)
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)

    def expand(self, question: str) -> list[Clause]:
        return self.clauses_from_output(question, self.generate(question))

    def clauses_from_output(self, question: str, output: str) -> list[Clause]:
        queries = [q for q in parse_queries(output, self.config.llm.n_queries) if usable(q, question)]
        if not queries:
            return RulesExpander(self.config).expand(question)
        weights = self.config.weights
        clauses = [Clause(question.strip(), "question", weights.question)]
        clauses += [Clause(q, "llm", weights.llm) for q in queries]
        return dedupe(clauses)[: self.config.max_clauses]
