"""Interleaf: multimodal document RAG with interleaved, cited answers."""

from interleaf.pymupdf_layout import defer

__version__ = "0.1.0"

defer()  # pymupdf's layout model, never used by Interleaf, loads only if something asks for a layout
