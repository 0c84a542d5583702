"""Which quotes an answer cites, read two ways and named apart.

- `mmdocrag`: exactly as MMDocRAG's reference scorer (eval_all.py, `calculate_all` and
  `extract_citations`) reads a response: an empty response is " "; the thinking is removed by
  keeping what follows the first "</think>\\n\\n" (else the first " seconds\\n\\n") up to the next
  one; then `\\[(\\d+)\\]` gives text labels `text<digits>` and `\\(image(\\d+)\\)` image labels
  `image<digits>`, each list deduplicated in first-seen order. The digits are kept as written, so
  `[01]` is `text01` and matches no quote. Figures in this mode compare with the paper's tables.
- `repaired`: Interleaf's citation module (interleaf/generate/citations.py): the forms models write
  instead are repaired first (`[1, 9]`, `[2–4]`, `Image 4 shows`, `[image3]`), then canonical
  citations are read. This is what a reader of the answer sees cited.

The two differ where a model groups citations (`[1,9]` counts nothing officially), names an image
in prose ("Image 4 shows"), or writes `(image5)` bare (official: a citation; repaired: one too, via
the `wrapped` form). Both give labels; `interleaf.evaluate.metrics.records.cited_from_answer` maps
them to the context's quotes.
"""

from __future__ import annotations

import re
from typing import Literal

from interleaf.generate.citations import parse_citations, repair

Parsing = Literal["repaired", "mmdocrag"]
PARSINGS: tuple[Parsing, ...] = ("repaired", "mmdocrag")

# eval_all.py's markers of a reasoning model's thinking, tried in this order
THINKING_ENDS = ("</think>\n\n", " seconds\n\n")
_MMDOCRAG_TEXT = re.compile(r"\[(\d+)\]")
_MMDOCRAG_IMAGE = re.compile(r"\(image(\d+)\)")


def without_thinking(response: str | None) -> str:
    """The response as eval_all.py scores it: " " for an empty one; after a thinking marker, the
    text between the first marker and the next one (its `split(marker)[1]`)."""
    text = response if response else " "
    for marker in THINKING_ENDS:
        if marker in text:
            return text.split(marker)[1]
    return text


def mmdocrag_labels(response: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(text labels, image labels) exactly as eval_all.py's `extract_citations` gives them."""
    text = without_thinking(response)
    texts = tuple(dict.fromkeys("text" + n for n in _MMDOCRAG_TEXT.findall(text)))
    images = tuple(dict.fromkeys("image" + n for n in _MMDOCRAG_IMAGE.findall(text)))
    return texts, images


def repaired_labels(markdown: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(text labels, image labels) of Interleaf's citation module, after repairing the forms."""
    marks = parse_citations(repair(markdown)[0])
    texts = tuple(dict.fromkeys(f"text{m.number}" for m in marks if m.modality == "text"))
    images = tuple(dict.fromkeys(f"image{m.number}" for m in marks if m.modality == "image"))
    return texts, images


def cited_labels(markdown: str, parsing: Parsing) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if parsing == "mmdocrag":
        return mmdocrag_labels(markdown)
    return repaired_labels(markdown)
