"""The offline describer: a description composed from what runs on this machine, with no VLM.

It stands in for MMDocRAG's VLM-text (§2.1) where no vision model is available: the caption, the
text found inside the image (text layer or OCR), the table structure, and the sentences of the
same document that refer to the figure or table ("Figure 3 shows…"). The text says what it was
built from, so nobody mistakes it for a model's reading of the image (§4.5 measures the gap).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from interleaf.describe.protocol import DescribeRequest, Description
from interleaf.text.references import Label, caption_label

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\u00C0-\u024F(\"“])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def referring_sentences(label: Label | None, texts: Iterable[str], limit: int) -> list[str]:
    """Sentences that mention the label ("Figure 3", "Fig. 3", "Table 2", "Tableau 2"), first ones
    first; a sentence that is itself a caption ("Table 2: ...") is not a reference to it."""
    if label is None or limit <= 0:
        return []
    pattern = label.mentions()
    found: list[str] = []
    for text in texts:
        for sentence in sentences(text):
            if pattern.search(sentence) and caption_label(sentence) is None and sentence not in found:
                found.append(sentence)
                if len(found) >= limit:
                    return found
    return found


def compose(request: DescribeRequest) -> Description:
    parts: list[str] = []
    sources: list[str] = []
    header = f"{request.kind.capitalize()} on page {request.page_idx + 1}."
    if request.caption:
        parts.append(f"Caption: {request.caption.strip()}")
        sources.append("caption")
    if request.table_md:
        parts.append("Table contents (rows and columns):\n" + request.table_md)
        sources.append("table_md")
    elif request.ocr_text:
        where = "text layer" if request.ocr_source == "text_layer" else f"OCR ({request.ocr_source})"
        parts.append(f"Text in the {request.kind} ({where}):\n{request.ocr_text.strip()}")
        sources.append("ocr_text")
    if request.references:
        parts.append("The document says about it: " + " ".join(f"“{s}”" for s in request.references))
        sources.append("references")
    if not parts:
        return Description(None, (), "offline description: no caption, text or reference to build from")
    built = ", ".join(s.replace("_", " ") for s in sources)
    footer = f"[Composed offline from the {built}; no vision model read the image.]"
    return Description("\n".join([header, *parts, footer]), tuple(sources))


class OfflineDescriber:
    name = "offline"
    model: str | None = None
    prompt_hash: str | None = None

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        return [compose(r) for r in requests]
