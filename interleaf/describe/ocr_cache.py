"""OCR readings cached by the pixels read, for the glyphs the describe stage reads again.

`page_texts` resolves the text layer's unnamed stand-in glyphs by OCR of small cells
(interleaf.pdf.glyphs): measured on the IBM Redpaper, 22 glyphs read three times each at ~0.9 s
(the detector scales every cell up to 736 px) are 61 of describe's 79 s. It runs before any
reading is looked up, because the words it yields are part of the reading's key, so without this
a run whose readings are all cached (another describer, another `max_references`) reads every
glyph again. The key is the image itself: OCR of the same pixels by the same engine (the cache
namespace carries its fingerprint) gives the same lines.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from interleaf.pdf.ocr.protocol import OcrEngine, OcrLine
from interleaf.stage import ContentCache


class CachedOcr:
    """An OcrEngine whose readings are kept in `cache` under `namespace`; an OcrError is not kept."""

    def __init__(self, engine: OcrEngine, cache: ContentCache, namespace: str = "read") -> None:
        self.engine, self.cache, self.namespace = engine, cache, namespace
        self.name = engine.name
        self.read_count = 0  # readings the engine made (cache misses)

    def fingerprint_config(self) -> dict[str, Any]:
        return self.engine.fingerprint_config()

    def read(self, image_bgr: np.ndarray) -> list[OcrLine]:
        if not isinstance(image_bgr, np.ndarray):  # the engine says why it cannot read it
            return self.engine.read(image_bgr)
        digest = hashlib.sha256(f"ocr {image_bgr.shape} {image_bgr.dtype}".encode())
        digest.update(np.ascontiguousarray(image_bgr).tobytes())
        key = digest.hexdigest()
        got = self.cache.get(self.namespace, key)
        if got is not None:
            return [OcrLine((b[0], b[1], b[2], b[3]), text, conf) for b, text, conf in got["lines"]]
        lines = self.engine.read(image_bgr)
        self.read_count += 1
        self.cache.put(self.namespace, key, {"lines": [[list(ln.box), ln.text, ln.conf] for ln in lines]})
        return lines
