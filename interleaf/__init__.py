"""Interleaf: multimodal document RAG with interleaved, cited answers."""

import sys

__version__ = "0.1.0"

# pymupdf 2.0 imports its optional layout analyzer at import (`pymupdf.layout`, which loads an ONNX
# model into the process: +53 MB RSS in each process that imports pymupdf, the command, the
# forkserver and every page worker). Interleaf's layouts come from its own parsers and it never calls
# `page.get_layout()` or `find_tables()`, the two users of that model; pymupdf catches the
# ImportError this gives and runs as without the optional package. A process that imported pymupdf
# before interleaf keeps the analyzer.
sys.modules.setdefault("pymupdf.layout", None)
