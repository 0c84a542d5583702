"""The parse stage's page geometry on its own: boxes in, blocks out (no model, no file)."""

from __future__ import annotations

from interleaf.parse.layout import regions as rg
from interleaf.parse.layout.model import Region
from interleaf.parse.layout.reading_order import reading_order
from interleaf.pdf.words import Word, clean_token_share


def block(kind: str, x0: float, y0: float, x1: float, y1: float, text: str = "") -> rg.Block:
    b = rg.Block(kind, x0, y0, x1, y1, 0.9)
    b.text = text
    return b


def test_split_figure_halves_are_merged_but_distant_figures_are_not() -> None:
    left, right = block("figure", 50, 100, 200, 300), block("figure", 205, 110, 350, 290)
    far = block("figure", 50, 500, 200, 600)
    merged = rg.merge_split_figures([left, right, far])
    figures = sorted((b.bbox for b in merged if b.kind == "figure"), key=lambda b: b[1])
    assert figures == [(50, 100, 350, 300), (50, 500, 200, 600)]


def test_duplicate_boxes_keep_the_more_confident_label() -> None:
    regions = [Region("text", 100, 100, 300, 150, 0.6), Region("reference", 101, 99, 300, 151, 0.8)]
    kept = rg.dedupe(rg.blocks_from_regions(regions))
    assert [b.kind for b in kept] == ["reference"]


def test_text_boxes_inside_a_table_belong_to_it() -> None:
    regions = [Region("table", 50, 50, 400, 300, 0.95), Region("table_caption", 60, 55, 200, 70, 0.7)]
    kept = rg.dedupe(rg.blocks_from_regions(regions))
    assert [b.kind for b in kept] == ["table"]


def test_numbered_caption_beats_a_nearer_unnumbered_label() -> None:
    table = block("table", 50, 100, 300, 200)
    label = block("caption", 60, 205, 200, 215, "F1-score")
    caption = block("text", 50, 225, 300, 245, "Table 2: Model performances")
    rest = rg.attach_captions([table, label, caption], max_gap=40)
    assert table.caption == "Table 2: Model performances"
    assert label in rest and caption not in rest


def test_figure_caption_above_a_table_is_not_taken_by_it() -> None:
    figure, table = block("figure", 50, 300, 300, 500), block("table", 50, 100, 300, 200)
    caption = block("text", 50, 505, 300, 520, "Figure 3: Results")
    rg.attach_captions([figure, table, caption], max_gap=40)
    assert figure.caption == "Figure 3: Results" and table.caption is None


def worded(kind: str, words: list[Word]) -> rg.Block:
    x0, y0 = min(w.x0 for w in words), min(w.y0 for w in words)
    b = rg.Block(kind, x0, y0, max(w.x1 for w in words), max(w.y1 for w in words), 0.9, words=list(words))
    b.text = rg.words_to_text(b.words)
    return b


def line(x0: float, y0: float, text: str, block_no: int, height: float = 10.0) -> list[Word]:
    """One text-layer line, a word every 40 points."""
    return [Word(x0 + 40 * i, y0, x0 + 40 * i + 35, y0 + height, t, block_no, 0, i) for i, t in enumerate(text.split())]


def test_words_of_a_line_cut_off_by_a_text_box_join_it() -> None:
    caption_line = line(50, 300, "Figure 3: Performance of retrieval", block_no=7)
    box = rg.Block("text", 100, 298, 300, 312, 0.8)  # the model's box starts at "3:"
    orphans = rg.assign_words([box], [*caption_line, *line(50, 400, "unrelated footnote", block_no=8)])
    assert [w.text for w in orphans] == ["Figure", "unrelated", "footnote"]
    left = rg.complete_lines([box], orphans)
    assert [w.text for w in left] == ["unrelated", "footnote"]
    assert rg.words_to_text(box.words) == "Figure 3: Performance of retrieval" and box.x0 == 50


def test_legend_and_panel_titles_join_their_figure_but_body_text_does_not() -> None:
    figure = rg.Block("figure", 50, 100, 550, 250, 0.95)
    figure.words = line(60, 120, "50 75 80", block_no=1)
    panel_title = worded("text", line(100, 88, "Groundedness", block_no=2))  # 2 pt above the box
    legend = worded("caption", line(150, 256, "Single-query Multiple-query", block_no=3))
    caption = worded("text", line(50, 275, "Figure 3: Performance", block_no=4))
    heading = worded("title", line(50, 60, "Results", block_no=5, height=20))
    body = worded("text", line(50, 300, "Body text follows the caption", block_no=6))
    big_heading = worded("text", line(50, 76, "Contents", block_no=9, height=22))  # touches, but a heading
    blocks = rg.attach_captions([figure, panel_title, legend, caption, heading, body, big_heading], max_gap=40)
    assert figure.caption == "Figure 3: Performance"
    kept = rg.absorb_float_labels(blocks)
    assert kept == [figure, heading, body, big_heading]
    assert "Groundedness" in figure.text and "Single-query Multiple-query" in figure.text
    assert figure.bbox == (50, 88, 550, 266)  # the crop holds its legend and panel titles


def test_running_heads_touching_a_full_page_table_stay_apart() -> None:
    table = rg.Block("table", 67, 67, 559, 767, 0.95)  # a manual's table, header to footer
    table.words = line(80, 100, "Code Meaning", block_no=1)
    head = worded("header", line(315, 52, "2.3 Terminal Responses", block_no=2))
    foot = worded("text", line(436, 764, "for Official Use Only", block_no=3))
    assert rg.absorb_float_labels([table, head, foot]) == [table, head, foot]


def test_two_column_reading_order_with_a_full_width_band() -> None:
    title = block("title", 100, 50, 500, 80)
    left_top, left_bottom = block("text", 50, 100, 290, 300), block("text", 50, 310, 290, 500)
    right_top = block("text", 320, 100, 560, 400)
    wide_figure = block("figure", 50, 520, 560, 650)
    left_after, right_after = block("text", 50, 660, 290, 740), block("text", 320, 660, 560, 740)
    header, footer = block("header", 50, 10, 200, 20), block("footer", 280, 760, 320, 770)
    shuffled = [right_after, footer, wide_figure, right_top, left_bottom, header, left_after, title, left_top]
    ordered = reading_order(shuffled, page_width=612)
    assert ordered == [header, title, left_top, left_bottom, right_top, wide_figure, left_after, right_after, footer]


def test_block_text_keeps_a_two_line_label_together_and_reads_rows() -> None:
    words = [
        Word(10, 10, 40, 20, "Abnormal", 1, 0, 0),
        Word(42, 10, 60, 20, "cells", 1, 0, 1),
        Word(10, 22, 50, 32, "multiply", 1, 1, 0),
        Word(100, 10, 140, 20, "Malignant", 2, 0, 0),
        Word(100, 22, 140, 32, "cancer", 2, 1, 0),
        Word(10, 50, 30, 60, "1", 3, 0, 0),
        Word(35, 50, 90, 60, "Introduction", 3, 1, 0),
    ]
    assert rg.words_to_text(words) == "Abnormal cells\nmultiply Malignant\ncancer\n1 Introduction"
    assert rg.table_words_to_text(words) == "Abnormal cells Malignant\nmultiply cancer\n1 Introduction"


def test_garbage_ocr_layer_scores_low_and_real_text_high() -> None:
    def words(text: str) -> list[Word]:
        return [Word(0, 0, 1, 1, t, 0, 0, i) for i, t in enumerate(text.split())]

    garbage = "«POAH «3E*»CM tanntxim. inc. / ^ . ^ toi n»Bfl. iseorty ttsrootj saifii, s*r;tiiR»"
    assert clean_token_share(words(garbage)) < 0.6
    assert clean_token_share(words("In 2023, revenue grew 12.5% to $4.1bn (see Table 3).")) > 0.9
    assert clean_token_share(words("코로나바이러스 감염증 확산 현황")) == 1.0
