"""Running heads and feet the layout model left as text, on real pages of the IRS manual."""

from __future__ import annotations

from interleaf.structure.furniture import line_key, running_furniture
from tests.support.structure_pages import IRS, parse_pages


def test_running_lines_are_found_and_content_is_kept() -> None:
    quotes, page_rows = parse_pages(IRS, (7, 8, 9, 50, 51, 52, 53))
    found = running_furniture(quotes, page_rows)
    texts = {" ".join(q["text"].split()) for q in quotes if q["quote_id"] in found}
    # the foot of the manual's pages prints "Internal Revenue Manual" (4 of these 7 as a text quote of its own)
    assert "Internal Revenue Manual" in texts
    assert not any(q["furniture"] for q in quotes if q["quote_id"] in found)  # only what the parser missed
    row = next(q for q in quotes if "values 22-33 are entity no-merge" in (q["text"] or ""))
    assert row["quote_id"] not in found
    # a running line is at most a few words and lies in the top or bottom band of its page
    assert all(len(q["text"].split()) <= 16 for q in quotes if q["quote_id"] in found)


def test_a_line_on_too_few_pages_is_not_furniture() -> None:
    quotes, page_rows = parse_pages(IRS, (50, 53))
    assert running_furniture(quotes, page_rows) == set()  # two pages: below the four-page floor


def test_numbers_fold_so_page_numbers_do_not_split_a_running_line() -> None:
    assert line_key("Command Codes BMFOL and BMFOR 2.3.59 page 47") == line_key(
        "Command Codes BMFOL and BMFOR 2.3.59 page 48"
    )
