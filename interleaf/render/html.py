"""Answers as self-contained HTML: one page per answer, or one report with every answer.

Everything a page needs is inside it: crops and page images as data: URLs, the CSS and the small
script inline, no fonts or scripts from elsewhere; a Content-Security-Policy forbids any fetch. All
text from documents and models is escaped (the answer's Markdown goes through markdown-it with raw
HTML, links and images turned off), and the policy lets only the page's own script run.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from html import escape
from importlib import resources

from markdown_it import MarkdownIt

from interleaf.generate.protocol import ContextQuote
from interleaf.render.marking import REGION, RESERVED, TOKEN, MarkedAnswer, mark_answer, sentence_reason
from interleaf.render.view import AnswerView, PageImage, QuoteIndex, image_label, quote_place, quote_title

_SNIPPET = 160  # characters of a quote shown on hover


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # the answer may echo document text: no raw HTML, and no link or image that could fetch anything
    md.disable(["image", "link", "autolink", "reference", "html_inline", "html_block"])
    return md


_MD = _markdown()


@cache
def _asset(name: str) -> str:
    return (resources.files("interleaf.render") / "assets" / name).read_text(encoding="utf-8")


def _mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError(f"not a PNG, JPEG, GIF or WebP image ({len(data)} bytes)")


def data_url(data: bytes) -> str:
    return f"data:{_mime(data)};base64,{base64.b64encode(data).decode('ascii')}"


def _attr(value: str) -> str:
    return escape(value, quote=True)


def _snippet(text: str) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= _SNIPPET else folded[: _SNIPPET - 1].rstrip() + "…"


@dataclass
class _Pictures:
    """Images loaded once per document: a crop or page cited by several answers is read and embedded once."""

    crops: dict[str, str] = field(default_factory=dict)  # img_path -> data URL, or "" when unreadable
    crop_errors: dict[str, str] = field(default_factory=dict)
    pages: dict[tuple[str, int], PageImage | str] = field(default_factory=dict)  # or why not
    page_dom_ids: dict[tuple[str, int], str] = field(default_factory=dict)  # pages already embedded
    crop_url: Callable[[ContextQuote], str] | None = None  # crops linked, not embedded (the server's page)

    def crop(self, view: AnswerView, quote: ContextQuote) -> str | None:
        """The crop's data URL; None (and the reason in crop_errors) when it cannot be shown."""
        path = quote.img_path
        if path is not None and self.crop_url is not None:
            return self.crop_url(quote)
        if path is None or view.load_image is None:
            return None
        if path not in self.crops:
            try:
                self.crops[path] = data_url(view.load_image(path))
            except (OSError, ValueError) as exc:  # missing or unreadable crop: shown as missing
                self.crops[path] = ""
                self.crop_errors[path] = str(exc)
        return self.crops[path] or None

    def page(self, view: AnswerView, quote: ContextQuote) -> PageImage | str | None:
        if view.load_page is None:
            return None
        key = (quote.doc_id, quote.page_idx)
        if key not in self.pages:
            try:
                self.pages[key] = view.load_page(*key)
            except OSError as exc:  # the PDF moved or cannot be read
                self.pages[key] = f"page image unavailable: {exc}"
        return self.pages[key]


class _AnswerHtml:
    """One answer's section; `prefix` keeps its element ids apart from the other answers'."""

    def __init__(self, view: AnswerView, prefix: str, pictures: _Pictures) -> None:
        self.view = view
        self.prefix = prefix
        self.pictures = pictures
        self.index = QuoteIndex(view.quotes)
        self.shown: dict[str, ContextQuote] = {}  # quotes with a card, in first-citation order

    def anchor(self, quote: ContextQuote) -> str:
        return f"{self.prefix}-{'t' if quote.modality == 'text' else 'i'}{quote.number}"

    def _cite(self, quote: ContextQuote, label: str) -> str:
        self.shown.setdefault(quote.quote_id, quote)
        title = f"{quote_place(quote)} — {_snippet(quote.text)}"
        return f'<a class="cite" href="#{self.anchor(quote)}" title="{_attr(title)}">{escape(label)}</a>'

    def _figure(self, quote: ContextQuote, alt: str) -> str:
        label = image_label(quote)
        link = self._cite(quote, f"image {quote.number}")
        caption = f'<span class="figcap">{link}: {escape(quote_title(quote))} — {escape(quote_place(quote))}</span>'
        url = self.pictures.crop(self.view, quote)
        if url is None:
            why = self.pictures.crop_errors.get(quote.img_path or "", "no crop stored")
            return f'<span class="figure missing">{caption}<span>image unavailable: {escape(why)}</span></span>'
        alt_text = alt.strip() or label
        return f'<span class="figure"><img src="{url}" alt="{_attr(alt_text)}">{caption}</span>'

    def _placement(self, marked: MarkedAnswer, k: int) -> str:
        placement = marked.placements[k]
        if placement.modality == "text":
            quote = self.index.text(placement.number)
            if quote is None:
                return f'<span class="cite missing" title="not in the context">[{placement.number}]</span>'
            return self._cite(quote, f"[{placement.number}]")
        quote = self.index.image(placement.number)
        if quote is None:
            return f'<span class="cite missing" title="not in the context">image{placement.number}</span>'
        return self._figure(quote, placement.alt)

    def body(self) -> str:
        marked = mark_answer(self.view.checked.markdown, self.view.checked.sentences)
        html = _MD.render(marked.text)
        flagged = iter(marked.flagged)

        def flag_region(match: re.Match[str]) -> str:
            sentence = next(flagged)
            reason = f"Not supported by its citations — {sentence_reason(sentence)}"
            runs = re.split(r"(<[^>]*>)", match.group(1))  # mark text runs only, so tags stay nested
            marked_runs = [
                run if run.startswith("<") or not run.strip() else f'<mark class="unsupported">{run}</mark>'
                for run in runs
            ]
            flag = (
                f'<span class="flag" tabindex="0" role="note" title="{_attr(reason)}">⚠'
                f'<span class="why">{escape(reason)}</span></span>'
            )
            return "".join(marked_runs) + flag

        html = REGION.sub(flag_region, html)
        html = TOKEN.sub(lambda m: self._placement(marked, int(m.group(1))), html)
        html = RESERVED.sub("", html)
        if marked.unplaced:
            items = "".join(f"<li>⚠ {escape(s.text)} — {escape(sentence_reason(s))}</li>" for s in marked.unplaced)
            html += f'<ul class="unplaced">{items}</ul>'
        return html

    def _page_figure(self, quote: ContextQuote) -> str:
        page = self.pictures.page(self.view, quote)
        if page is None:
            return ""
        if isinstance(page, str):
            return f'<span class="page missing">{escape(page)}</span>'
        key = (quote.doc_id, quote.page_idx)
        alt = _attr(f"{quote.doc_name}, page {quote.page_idx + 1}")
        if key in self.pictures.page_dom_ids:
            img = f'<img data-same-as="{self.pictures.page_dom_ids[key]}" alt="{alt}">'
        else:
            dom_id = f"pg{len(self.pictures.page_dom_ids)}"
            self.pictures.page_dom_ids[key] = dom_id
            img = f'<img id="{dom_id}" src="{data_url(page.data)}" alt="{alt}">'
        box = ""
        if quote.bbox is not None:
            left, top, width, height = page.box_percent(quote.bbox)
            box = (
                f'<span class="box" style="left:{left:.2f}%;top:{top:.2f}%;width:{width:.2f}%;height:{height:.2f}%">'
                "</span>"
            )
        return f'<span class="page">{img}{box}</span>'

    def _card(self, quote: ContextQuote) -> str:
        label = f"[{quote.number}]" if quote.modality == "text" else f"image {quote.number}"
        caption = f'<p class="caption">{escape(quote.caption)}</p>' if quote.caption else ""
        return (
            f'<li><details class="quote" id="{self.anchor(quote)}"><summary><span class="qlabel">{escape(label)}</span>'
            f'<span class="doc">{escape(quote.doc_name)}</span> · <span class="pg">page {quote.page_idx + 1}</span>'
            f' · <span class="kind">{escape(quote.kind)}</span></summary><div class="qbody">'
            f'<blockquote class="qtext">{escape(quote.text)}</blockquote>{caption}{self._page_figure(quote)}'
            "</div></details></li>"
        )

    def section(self, heading_level: int = 2) -> str:
        view = self.view
        checked = view.checked
        if view.error:
            body = f'<p class="error">No answer: {escape(view.error)}</p>'
        else:
            body = self.body()
            for quote_id in checked.cited_quote_ids:  # cited where the answer's text was not found
                if quote_id in self.index.by_id:
                    self.shown.setdefault(quote_id, self.index.by_id[quote_id])
        cards = "".join(self._card(q) for q in self.shown.values())
        sources = f'<section class="sources"><h3>Sources</h3><ol>{cards}</ol></section>' if cards else ""
        h = f"h{heading_level}"
        short = (
            f'<p class="short"><b>Short answer:</b> {escape(view.short_answer)}</p>'
            if view.short_answer and not view.error
            else ""
        )
        return (
            f'<section class="answer" id="{self.prefix}"><{h}><span class="qid">{escape(view.question_id)}</span>'
            f"{escape(view.question)}</{h}>"
            f'<p class="meta">{escape(_meta(view))}</p><div class="body">{body}</div>{short}{sources}</section>'
        )


def _unsupported(view: AnswerView) -> int:
    return sum(1 for s in view.checked.sentences if s.supported is False)


def _meta(view: AnswerView) -> str:
    checked = view.checked
    parts = [view.generator + (f" ({view.model})" if view.model else ""), f"{view.seconds:.1f} s"]
    parts.append(f"{len(checked.sentences)} sentences, {_unsupported(view)} unsupported")
    if checked.invalid:
        parts.append(f"{checked.invalid} citation{'s' * (checked.invalid != 1)} of quotes outside the context dropped")
    if checked.repaired:
        parts.append(f"{checked.repaired} citation{'s' * (checked.repaired != 1)} repaired")
    return " · ".join(parts)


def _document(title: str, main: str) -> str:
    script = _asset("report.js")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{script_hash}'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_attr(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head>\n"
        f"<body><main>{main}</main><script>{script}</script></body></html>\n"
    )


def render_answer_body(view: AnswerView, prefix: str, crop_url: Callable[[ContextQuote], str]) -> str:
    """One answer's text as an HTML fragment, its crops linked through `crop_url` (an HTTP server's
    page); citations are `<a class="cite" href="#<prefix>-t3">` (text 3) and `#<prefix>-i2` (image 2)."""
    return _AnswerHtml(view, prefix, _Pictures(crop_url=crop_url)).body()


def render_answer_page(view: AnswerView) -> str:
    """One answer as a self-contained HTML page."""
    section = _AnswerHtml(view, "a0", _Pictures()).section(heading_level=1)
    return _document(view.question, section)


def render_report(items: Sequence[AnswerView], title: str) -> str:
    """Every answer in one self-contained HTML page: a table of contents, then one section each."""
    pictures = _Pictures()
    sections = [_AnswerHtml(view, f"a{i}", pictures).section() for i, view in enumerate(items)]
    entries = []
    for i, view in enumerate(items):
        unsupported = _unsupported(view)
        badge = f' <span class="badge">⚠ {unsupported} unsupported</span>' if unsupported else ""
        if view.error:
            badge = ' <span class="badge">no answer</span>'
        qid = f'<span class="qid">{escape(view.question_id)}</span>'
        entries.append(f'<li><a href="#a{i}">{qid}{escape(view.question)}</a>{badge}</li>')
    failed = sum(1 for v in items if v.error)
    flagged = sum(_unsupported(v) for v in items)
    summary = f"{len(items)} answers · {failed} failed · {flagged} unsupported sentences"
    main = (
        f'<h1>{escape(title)}</h1><p class="summary">{escape(summary)}</p>'
        f'<nav class="toc"><h3>Questions</h3><ol>{"".join(entries)}</ol></nav>{"".join(sections)}'
    )
    return _document(title, main)
