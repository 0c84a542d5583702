"""Paragraph boxes the layout model drew wrong, set right by the parse (interleaf/parse/layout/
paragraphs.py), on two pages of the MMLongBench-Doc dev half (../shared/benchmarks/mmlongbench-dev):
a 10-K's notes page, where one box runs from the end of one note over the next note's heading into
its text, and a slide whose definition the model boxed in two mid-sentence."""

from __future__ import annotations

from interleaf.parse.config import LayoutConfig
from interleaf.parse.layout.parser import parse_page
from interleaf.parse.protocol import ParsedQuote
from tests.support.dev_half import dev_pdf


def _quotes(name: str, page_idx: int) -> list[ParsedQuote]:
    with dev_pdf(name) as doc:
        return parse_page(doc[page_idx], LayoutConfig()).quotes


def test_a_box_over_a_heading_is_cut_there_and_each_section_keeps_its_own_text() -> None:
    quotes = _quotes("BESTBUY_2023_10K.pdf", 44)
    kinds_texts = [(q.kind, q.text) for q in quotes]
    at = next(i for i, (kind, text) in enumerate(kinds_texts) if kind == "title" and text == "Merchandise Inventories")
    # the note's text is the quote after its heading, and opens with the note's first sentence
    assert kinds_texts[at + 1][1].startswith("Merchandise inventories are recorded at the lower of cost"), kinds_texts
    # the note before it ends in a quote of its own: no quote holds the end of one and the start of the other
    assert not any("write-offs" in text and "Merchandise inventories are recorded" in text for _, text in kinds_texts)
    assert any("write-offs in fiscal 2023" in text for _, text in kinds_texts[:at])


def test_a_paragraph_boxed_in_two_mid_sentence_is_one_quote() -> None:
    quotes = _quotes("0e94b4197b10096b1f4c699701570fbf.pdf", 10)
    texts = [" ".join(q.text.split()) for q in quotes]
    sentence = "Elements of objects tend to be perceptually grouped together if they form a pattern"
    assert any(sentence in text for text in texts), texts
    # and a paragraph that ends its sentence stays apart from the next one
    assert not any(text.startswith("Law of good Gestalt") and "This meaning created" in text for text in texts)
