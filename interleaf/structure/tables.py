"""Tables continued across pages: the parts of one table, linked, each knowing the table's title and
header row.

A long table is cut by page breaks into one quote per page; only the first part carries the caption
("Exhibit 7.4.12-14 ... Account Summary"), and often only the first part carries the header row
("FIELD NAME FORMAT AND LIMITS"). A later part alone names neither, so a question that
names the table cannot find it. Parts are linked when a table follows a table of the previous page in
the same section and says it continues ("(Cont'd 2)", "continued"), repeats the header row, or has no
caption of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from interleaf.evidence import fold
from interleaf.structure.headings import CONTINUED, clean_title, parse_heading

TABLE_KINDS = frozenset({"table"})
# A header row is a short line of words: column names, not data (measured on the IRS manual's exhibits:
# "FIELD NAME FORMAT AND LIMITS"; docs/ tables give theirs as the Markdown table's first row).
MAX_HEADER_WORDS = 12
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}")


@dataclass(frozen=True)
class TablePart:
    quote_id: str
    table_id: str  # the quote id of the table's first part
    part: int  # 1-based
    title: str  # the first part's caption or heading, continuation marks and dates removed
    header_row: str | None  # the first part's header row
    repeats_header: bool  # this part's own text already starts with the header row


def _is_header(line: str, cells: list[str] | None = None) -> bool:
    """Column names: not a heading or a continuation mark; a line of text: a short line of words with
    no digits (the IRS exhibits' data rows start with numbers); Markdown cells: mostly not numbers
    ("Model | F1 | EM" is a header, "1 | 03-08 | Service Code" is not)."""
    if parse_heading(line) is not None or CONTINUED.search(line):
        return False
    if cells is not None:
        numeric = sum(bool(re.fullmatch(r"[\d.,:%()\-–/ ]+", c)) for c in cells)
        return bool(cells) and numeric * 2 < len(cells)
    words = line.split()
    return (
        bool(words)
        and len(words) <= MAX_HEADER_WORDS
        and not any(ch.isdigit() for ch in line)
        and sum(w.isalpha() for w in words) >= max(1, len(words) - 1)
    )


def header_row(text: str | None, table_md: str | None = None) -> str | None:
    """A table's header row: the Markdown table's first row, else the first line of its text (after a
    heading line) made of words only. A first row that is not column names (the describer's table of
    a continued exhibit starts "7.4.12-14 (Cont'd | 2) (05-22-2019)") falls back to the text."""
    if table_md:
        lines = [ln for ln in table_md.splitlines() if ln.strip()]
        if len(lines) > 1 and _MD_SEPARATOR.match(lines[1]):
            cells = [c.strip() for c in lines[0].strip().strip("|").split("|") if c.strip()]
            row = " | ".join(cells)
            if row and _is_header(" ".join(cells), cells):
                return row
    for line in (text or "").splitlines()[:3]:
        line = " ".join(line.split())
        if not line or parse_heading(line) is not None or CONTINUED.search(line):
            continue
        return line if _is_header(line) else None
    return None


def _title(q: dict[str, Any]) -> str:
    if q.get("caption"):
        return clean_title(q["caption"])[0] or " ".join(q["caption"].split())
    first = (q.get("text") or "").strip().splitlines()[:2]
    h = parse_heading("\n".join(first))
    return f"{h.label} {h.title}".strip() if h is not None else ""


def _says_continued(q: dict[str, Any]) -> bool:
    head = " ".join([q.get("caption") or "", *(q.get("text") or "").splitlines()[:2]])
    return bool(CONTINUED.search(head))


def link_table_parts(
    quotes: Sequence[dict[str, Any]],
    section_of: Mapping[str, str] | None = None,
    table_md: Mapping[str, str] | None = None,
) -> dict[str, TablePart]:
    """{quote_id: TablePart} for every table quote of one document (rows of `quotes`, any order)."""
    tables = sorted((q for q in quotes if q["kind"] in TABLE_KINDS), key=lambda r: (r["page_idx"], r["layout_idx"]))
    last_on_page: dict[int, str] = {}
    first_on_page: dict[int, str] = {}
    for q in tables:
        last_on_page[q["page_idx"]] = q["quote_id"]
        first_on_page.setdefault(q["page_idx"], q["quote_id"])
    md = table_md or {}
    out: dict[str, TablePart] = {}
    for q in tables:
        qid = q["quote_id"]
        row = header_row(q.get("text"), md.get(qid))
        prev_id = last_on_page.get(q["page_idx"] - 1)
        prev = out.get(prev_id) if prev_id is not None else None
        same_section = section_of is None or (prev is not None and section_of.get(prev_id) == section_of.get(qid))
        continues = (
            prev is not None
            and first_on_page.get(q["page_idx"]) == qid
            and same_section
            and (
                _says_continued(q)
                or (row is not None and prev.header_row is not None and fold(row) == fold(prev.header_row))
                or not (q.get("caption") or "").strip()
            )
        )
        if continues and prev is not None:
            first_text = (q.get("text") or "").strip()
            repeats = bool(prev.header_row) and fold(prev.header_row) in fold(" ".join(first_text.splitlines()[:3]))
            out[qid] = TablePart(qid, prev.table_id, prev.part + 1, prev.title, prev.header_row, repeats)
        else:
            out[qid] = TablePart(qid, qid, 1, _title(q), row, row is not None)
    return out
