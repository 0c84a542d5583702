"""An answer for the terminal (rich): the text with its citations, each image placement as a labelled
line (`[image 2: Table 2 — report-2031.pdf p.4]`), unsupported sentences flagged, then the sources.

Everything is built as rich `Text`, never parsed as console markup, so a quote containing `[bold]`
prints as it is.
"""

from __future__ import annotations

import re

from rich.console import Group
from rich.text import Text

from interleaf.generate.protocol import CheckedAnswer, ContextQuote
from interleaf.render.marking import (
    RESERVED,
    SENT_END,
    SENT_START,
    TOKEN,
    TOKEN_CLOSE,
    TOKEN_OPEN,
    mark_answer,
    sentence_reason,
)
from interleaf.render.view import QuoteIndex, image_label, quote_place

_PARTS = re.compile(f"({TOKEN_OPEN}\\d+{TOKEN_CLOSE}|{SENT_START}|{SENT_END})")
_SNIPPET = 110


def _snippet(text: str) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= _SNIPPET else folded[: _SNIPPET - 1].rstrip() + "…"


def render_terminal(
    question: str,
    checked: CheckedAnswer,
    quotes: tuple[ContextQuote, ...] | list[ContextQuote],
    short_answer: str | None = None,
) -> Group:
    """The answer as the terminal shows it; `short_answer` (the value asked for), when the
    generator gave one, on a line of its own after the answer."""
    index = QuoteIndex(quotes)
    marked = mark_answer(checked.markdown, checked.sentences)
    cited: dict[str, ContextQuote] = {}
    answer = Text()
    flagged = 0
    inside = False
    after_image = False  # an image line ends its line
    for part in _PARTS.split(marked.text):
        if not part:
            continue
        if after_image and part != SENT_END:  # the flag stays on the image's line
            if not part.startswith("\n"):
                answer.append("\n")
            after_image = False
        token = TOKEN.fullmatch(part)
        if part == SENT_START:
            inside = True
        elif part == SENT_END:
            inside = False
            flagged += 1
            answer.append(f" ⚠{flagged}", style="bold red")
        elif token:
            place = marked.placements[int(token.group(1))]
            quote = index.text(place.number) if place.modality == "text" else index.image(place.number)
            if quote is None:
                answer.append(f"[{place.number}]" if place.modality == "text" else f"image{place.number}", style="dim")
            elif quote.modality == "text":
                cited.setdefault(quote.quote_id, quote)
                answer.append(f"[{quote.number}]", style="bold cyan")
            else:
                cited.setdefault(quote.quote_id, quote)
                if answer.plain and not answer.plain.endswith("\n"):
                    answer.append("\n")
                answer.append(f"[{image_label(quote)}]", style="bold magenta")
                after_image = True
        else:
            answer.append(RESERVED.sub("", part), style="yellow" if inside else "")
    for quote_id in checked.cited_quote_ids:
        if quote_id in index.by_id:
            cited.setdefault(quote_id, index.by_id[quote_id])

    parts: list[Text] = [Text(question, style="bold"), Text(), answer]
    if short_answer:
        parts += [Text(), Text.assemble(("Short answer: ", "bold"), short_answer)]
    problems = list(marked.flagged) + list(marked.unplaced)
    if problems:
        parts += [Text(), Text("Unsupported", style="bold red")]
        for k, sentence in enumerate(problems, start=1):
            line = Text(f" ⚠{k} ", style="bold red")
            line.append(_snippet(sentence.text))
            line.append(f" — {sentence_reason(sentence)}", style="dim")
            parts.append(line)
    if cited:
        parts += [Text(), Text("Sources", style="bold")]
        for quote in cited.values():
            label = f"[{quote.number}]" if quote.modality == "text" else f"image{quote.number}"
            line = Text(f" {label} ", style="bold cyan" if quote.modality == "text" else "bold magenta")
            line.append(quote_place(quote), style="bold")
            line.append(f" ({quote.kind}) ")
            line.append(f"“{_snippet(quote.text)}”", style="dim")
            parts.append(line)
    return Group(*parts)
