"""Retriever kinds: for each `kind` of `index.retrievers`, the shape of its configuration and its
implementation (a `Retriever`, interleaf/index/protocol.py). A new kind is one file holding both and
one line here; the index stage, the loaded index and retrieval ask the retriever what they need (its
table, its engines, whether a score of 0 is no match), never its kind.

The implementations are imported when first used: BM25's and the encoders' libraries stay out of
a command that only reads the configuration."""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import Field

from interleaf.index.protocol import Retriever


@dataclass(frozen=True)
class RetrieverKind:
    config: str  # "module:Class" of its configuration's shape (a RetrieverBase with a `kind` Literal)
    implementation: str  # "module:Class" of its Retriever, built from that configuration


KINDS: dict[str, RetrieverKind] = {
    "bm25": RetrieverKind("interleaf.index.retriever_config:BM25Config", "interleaf.index.bm25:BM25Retriever"),
    "bm25_rows": RetrieverKind(
        "interleaf.index.retriever_config:BM25RowsConfig", "interleaf.index.bm25_rows:BM25RowsRetriever"
    ),
    "dense": RetrieverKind("interleaf.index.retriever_config:DenseConfig", "interleaf.index.dense:DenseRetriever"),
    "visual": RetrieverKind("interleaf.index.retriever_config:VisualConfig", "interleaf.index.visual:VisualRetriever"),
}


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


# one shape per kind, told apart by `kind`
RetrieverConfig = Annotated[
    Union[tuple(_load(k.config) for k in KINDS.values())],  # noqa: UP007 (a union built from the registry)
    Field(discriminator="kind"),
]


@functools.cache
def retriever_class(kind: str) -> type[Retriever]:
    """The implementation of `kind`, imported on first use."""
    if kind not in KINDS:
        raise ValueError(f"unknown retriever kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return _load(KINDS[kind].implementation)  # type: ignore[no-any-return]


def get_retriever(spec: Any) -> Retriever:
    """The retriever `spec` (an `index.retrievers` item) configures."""
    return retriever_class(spec.kind)(spec)  # type: ignore[call-arg]
