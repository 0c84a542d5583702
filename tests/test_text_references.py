"""interleaf.text.references: the one reference pattern that the parser (caption pairing), the
offline describer (referring sentences), the expander and the lexical reranker share."""

from __future__ import annotations

import pytest

from interleaf.text.references import REFERENCE, Label, caption_label, is_reference


@pytest.mark.parametrize(
    ("caption", "label"),
    [
        ("Figure 3: Results", Label("figure", "3")),
        ("Fig. 3b shows the panel", Label("figure", "3b")),
        ("Table IV. Scores", Label("table", "iv")),
        ("Tab.2 Ports", Label("table", "2")),
        ("Table 2-2: Response codes", Label("table", "2-2")),  # chapter-numbered, as in manuals
        ("Tableau 4 – Coûts", Label("table", "4")),
        ("Abbildung 1: Aufbau", Label("figure", "1")),
        ("图 1 系统结构", Label("figure", "1")),
        ("표 2 결과", Label("table", "2")),
        ("Listing 1: Scoring.", Label("listing", "1")),
        ("Results of the study", None),
        ("Figures are shown below", None),
        ("Table in the appendix", None),
    ],
)
def test_caption_labels(caption: str, label: Label | None) -> None:
    assert caption_label(caption) == label


def test_mentions_are_whole_numbers_of_the_same_family() -> None:
    mentions = Label("figure", "3").mentions()
    for text in ("As Figure 3 shows", "see Fig. 3a", "figs. 3 and 4", "Chart 3"):
        assert mentions.search(text), text
    for text in ("Figure 30", "Figure 3.2", "Figure 3-1", "Table 3", "Subfigure 3"):
        assert not mentions.search(text), text


def test_references_in_questions() -> None:
    question = "According to Figure 3 and Section 5.4, see Table 2-2, tables 3, Fig. 2, page 10 and Eq. 4"
    assert [m.group(0) for m in REFERENCE.finditer(question)] == [
        "Figure 3",
        "Section 5.4",
        "Table 2-2",
        "tables 3",
        "Fig. 2",
        "page 10",
        "Eq. 4",
    ]
    assert is_reference("Table 5") and is_reference(" Section 5.4 ")
    assert not is_reference("GPT-4.1") and not is_reference("Table 5 and 6") and not is_reference("Table")
