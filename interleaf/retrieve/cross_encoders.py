"""Cross-encoder rerankers by id or local path: FlagEmbedding FlagReranker, sentence-transformers
CrossEncoder, and Qwen3-Reranker (a causal LM judged by P("yes"), as its model card prescribes)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class FlagCrossEncoder:
    name = "flag"

    def __init__(self, model: str, batch_size: int, device: str) -> None:
        from FlagEmbedding import FlagReranker

        self.model = FlagReranker(os.path.expanduser(model), use_fp16=False, devices=[device])
        self.batch_size = batch_size

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        scores = self.model.compute_score([[query, p] for p in passages], batch_size=self.batch_size)
        return [float(s) for s in np.atleast_1d(np.asarray(scores, dtype=np.float64))]


class STCrossEncoder:
    name = "cross-encoder"

    def __init__(self, model: str, batch_size: int, device: str) -> None:
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(os.path.expanduser(model), device=device)
        self.batch_size = batch_size

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        scores = self.model.predict([(query, p) for p in passages], batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) for s in np.atleast_1d(np.asarray(scores, dtype=np.float64))]


QWEN3_SYSTEM = (
    "Judge whether the Document meets the requirements based on the Query and the Instruct provided. "
    'Note that the answer can only be "yes" or "no".'
)
QWEN3_TASK = "Given a web search query, retrieve relevant passages that answer the query"


class Qwen3Reranker:
    """Qwen3-Reranker: the score is P(yes) / (P(yes) + P(no)) on the last position."""

    name = "qwen3"

    def __init__(self, model: str, batch_size: int, device: str, max_length: int = 1024) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = os.path.expanduser(model)
        self.tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
        self.model: Any = AutoModelForCausalLM.from_pretrained(path).to(device).eval()
        self.yes = self.tokenizer.convert_tokens_to_ids("yes")
        self.no = self.tokenizer.convert_tokens_to_ids("no")
        self.batch_size, self.max_length = batch_size, max_length

    def format(self, query: str, passage: str) -> str:
        return (
            f"<|im_start|>system\n{QWEN3_SYSTEM}<|im_end|>\n<|im_start|>user\n"
            f"<Instruct>: {QWEN3_TASK}\n<Query>: {query}\n<Document>: {passage}<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n"
        )

    def score(self, query: str, passages: list[str]) -> list[float]:
        import torch

        out: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            texts = [self.format(query, p) for p in passages[start : start + self.batch_size]]
            inputs = self.tokenizer(
                texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            ).to(self.model.device)
            with torch.inference_mode():
                logits = self.model(**inputs).logits[:, -1, :]
            pair = torch.stack([logits[:, self.no], logits[:, self.yes]], dim=1).float()
            out.extend(torch.softmax(pair, dim=1)[:, 1].cpu().tolist())
        return out
