"""An answer as Markdown: the model's text with crops embedded as data: URLs, citations as footnotes
(`[^3]`, `[^image2]`) whose text is the quote, its document and page, unsupported sentences flagged.

Document text is backslash-escaped, so a quote never turns into Markdown or HTML in a viewer.
"""

from __future__ import annotations

import re

from interleaf.generate.protocol import ContextQuote
from interleaf.render.html import data_url
from interleaf.render.marking import REGION, RESERVED, TOKEN, mark_answer, sentence_reason
from interleaf.render.view import AnswerView, QuoteIndex, image_label, quote_place

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&$])")  # on one folded line, only these can start markup


def md_escape(text: str) -> str:
    """Text shown literally by any CommonMark renderer (white space folded to single spaces)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _footnote(quote: ContextQuote) -> str:
    return f"t{quote.number}" if quote.modality == "text" else f"image{quote.number}"


def render_markdown(view: AnswerView) -> str:
    index = QuoteIndex(view.quotes)
    cited: dict[str, ContextQuote] = {}
    lines = [f"## {md_escape(view.question)}", ""]
    if view.error:
        lines += [f"**No answer:** {md_escape(view.error)}", ""]
        return "\n".join(lines)

    marked = mark_answer(view.checked.markdown, view.checked.sentences)
    # the model's own Markdown stays; raw HTML in it is shown, never interpreted
    text = marked.text.replace("<", "\\<")
    flagged = iter(marked.flagged)
    text = REGION.sub(
        lambda m: f"{m.group(1)} ⚠ *(unsupported: {md_escape(sentence_reason(next(flagged)))})*",
        text,
    )

    def placement(match: re.Match[str]) -> str:
        place = marked.placements[int(match.group(1))]
        quote = index.text(place.number) if place.modality == "text" else index.image(place.number)
        if quote is None:
            return f"\\[{place.number}\\]" if place.modality == "text" else f"image{place.number}"
        cited.setdefault(quote.quote_id, quote)
        if quote.modality == "text":
            return f"[^{_footnote(quote)}]"
        label = f"*{md_escape(image_label(quote))}*[^{_footnote(quote)}]"
        if quote.img_path is None or view.load_image is None:
            return label
        try:
            url = data_url(view.load_image(quote.img_path))
        except (OSError, ValueError) as exc:  # missing crop: the label stays, the image goes
            return f"{label} (image unavailable: {md_escape(str(exc))})"
        alt = md_escape(place.alt or image_label(quote))
        return f"![{alt}]({url}) {label}"

    text = RESERVED.sub("", TOKEN.sub(placement, text))
    lines += [text.strip(), ""]
    for sentence in marked.unplaced:
        lines.append(f"> ⚠ {md_escape(sentence.text)} — unsupported: {md_escape(sentence_reason(sentence))}")
    for quote_id in view.checked.cited_quote_ids:
        if quote_id in index.by_id:
            cited.setdefault(quote_id, index.by_id[quote_id])
    lines.append("")
    for quote in cited.values():
        lines.append(
            f"[^{_footnote(quote)}]: **{md_escape(quote_place(quote))}** ({quote.kind}): {md_escape(quote.text)}"
        )
    return "\n".join(lines).rstrip() + "\n"
