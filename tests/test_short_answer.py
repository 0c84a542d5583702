"""The short answer beside the long one (interleaf/generate/short_answer.py): a model's last
`Short answer:` line read off its answer."""

from __future__ import annotations

import pytest

from interleaf.generate.short_answer import NOT_ANSWERABLE, abstained_short, split_short_answer


@pytest.mark.parametrize(
    ("raw", "body", "short"),
    [
        ("Revenue rose to $5.2 billion [1].\nShort answer: 5.2", "Revenue rose to $5.2 billion [1].", "5.2"),
        ("It is Berlin [2].\n\n**Short answer:** Berlin", "It is Berlin [2].", "Berlin"),
        ("Two items [1].\nshort answer: ['a', 'b']\n", "Two items [1].", "['a', 'b']"),
        (
            "A short answer: is not a line of its own here [1].",
            "A short answer: is not a line of its own here [1].",
            None,
        ),
        ("No line at all [1].", "No line at all [1].", None),
        ("Empty value [1].\nShort answer:   ", "Empty value [1].", None),
        # the last such line counts: a model that repeats itself
        ("Short answer: 3\nThen more [1].\nShort answer: 4", "Short answer: 3\nThen more [1].", "4"),
    ],
)
def test_split_short_answer(raw: str, body: str, short: str | None) -> None:
    assert split_short_answer(raw) == (body, short)


def test_an_abstention_is_not_answerable_whatever_the_line_said() -> None:
    assert abstained_short(False, "42") == NOT_ANSWERABLE
    assert abstained_short(True, "42") == "42"


def test_an_address_printed_twice_is_as_near_as_its_nearer_place() -> None:
    """Of two websites, the one printed nearest the name the question requires, wherever else it is
    printed: NSW's address stands first beside ACT's name, then again right after NSW's (read at
    its first place only, ACT's address was nearer NSW's name)."""
    from interleaf.generate.short_answer import _nearest_address

    text = (
        "Cancer Council ACT cancercouncil.com.au (see below) actcancer.org. For New South Wales, "
        "Cancer Council NSW cancercouncil.com.au."
    )
    assert _nearest_address(text, "What is the website of Cancer Council NSW?", ["Cancer Council NSW"]) == (
        "cancercouncil.com.au"
    )
