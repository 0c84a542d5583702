"""Retrievers by kind, as chosen in config (`index.retrievers`)."""

from __future__ import annotations

from interleaf.index.config import RetrieverConfig
from interleaf.index.protocol import Retriever


def get_retriever(spec: RetrieverConfig) -> Retriever:
    if spec.kind == "bm25":
        from interleaf.index.bm25 import BM25Retriever

        return BM25Retriever(spec)
    if spec.kind == "dense":
        from interleaf.index.dense import DenseRetriever

        return DenseRetriever(spec)
    if spec.kind == "visual":
        from interleaf.index.visual import VisualRetriever

        return VisualRetriever(spec)
    raise ValueError(f"unknown retriever kind {spec.kind!r}")
