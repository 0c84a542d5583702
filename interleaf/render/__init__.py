"""Rendering answers: Markdown, self-contained HTML (one answer, or a report of many), the terminal.

The caller builds an `AnswerView` per answer, with loaders for crops (`load_image(img_path)`) and
pages (`load_page(doc_id, page_idx)`, e.g. `pages.PdfPages`); the renderers read nothing else.
"""

from interleaf.render.html import render_answer_page, render_report
from interleaf.render.markdown import render_markdown
from interleaf.render.pages import PdfPages, render_page
from interleaf.render.terminal import render_terminal
from interleaf.render.view import AnswerView, PageImage, PageLoader, image_label

__all__ = [
    "AnswerView",
    "PageImage",
    "PageLoader",
    "PdfPages",
    "image_label",
    "render_answer_page",
    "render_markdown",
    "render_page",
    "render_report",
    "render_terminal",
]
