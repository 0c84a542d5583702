"""A document's numbered procedures: a lead that says what it does, ending in a colon ("To descale
the kettle:"), then lines numbered 1., 2., 3. ...; its steps are the numbers that follow the lead in
order, up to the next lead (a line between them continues a step, or is a label of the picture
beside it). Read by step_count.py (how many steps a procedure takes) and value_check.py (a sentence
stating that count is backed by the quote that numbers the steps)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from interleaf.generate.protocol import ContextQuote
from interleaf.generate.sentences import content_words

_LEAD = re.compile(r"^\s*(To\s+[^:\n]{2,80}?)\s*:")
_STEP = re.compile(r"^\s*(\d{1,2})\.\s+\S")
# how an answer states a procedure's count: "To descale the kettle takes 3 numbered steps"
STEPS_STATED = re.compile(r"\b(To\s+.{2,80}?)\s+takes\s+(\d{1,2})\s+numbered\s+steps?\b", re.I)


@dataclass(frozen=True)
class Procedure:
    lead: str  # "To descale the kettle"
    steps: int
    quote: ContextQuote


def procedures(quote: ContextQuote) -> list[Procedure]:
    """Every lead of the quote's printed text (an image quote's OCR text) with the numbered steps
    that follow it."""
    out: list[Procedure] = []
    lead: str | None = None
    steps = 0
    printed = quote.ocr_text if quote.modality == "image" and quote.ocr_text else quote.text
    for line in (printed or "").splitlines():
        if m := _LEAD.match(line):
            if lead is not None and steps:
                out.append(Procedure(lead, steps, quote))
            lead, steps = m.group(1), 0
            line = line[m.end() :]
        if lead is not None and (s := _STEP.match(line)) and int(s.group(1)) == steps + 1:
            steps += 1
    if lead is not None and steps:
        out.append(Procedure(lead, steps, quote))
    return out


def steps_held(claim: str, number: str, quote: ContextQuote) -> bool:
    """The claim states `number` as the step count of a procedure the quote numbers so, under the
    same lead ("To descale the kettle takes 3 numbered steps" of a quote numbering its steps 1 to 3)."""
    for m in STEPS_STATED.finditer(claim):
        if m.group(2) == number:
            said = set(content_words(m.group(1)))
            if any(p.steps == int(number) and set(content_words(p.lead)) == said for p in procedures(quote)):
                return True
    return False
