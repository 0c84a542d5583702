"""Interleaf: multimodal document RAG with interleaved, cited answers."""

__version__ = "0.1.0"
