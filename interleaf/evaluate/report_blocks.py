"""The report's building blocks and their two renderings: Markdown (PNGs beside it) and one
self-contained HTML page (PNGs inlined as data URLs, nothing fetched)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    body: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    path: Path
    caption: str


Block = Heading | Para | Table | Image


def to_markdown(blocks: Sequence[Block], out_dir: Path) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Para):
            parts.append(block.text)
        elif isinstance(block, Table):
            cells = [[c.replace("|", "\\|").replace("\n", " ") for c in line] for line in (block.header, *block.body)]
            lines = ["| " + " | ".join(line) + " |" for line in cells]
            lines.insert(1, "|" + "|".join(" --- " for _ in block.header) + "|")
            parts.append("\n".join(lines))
        else:
            parts.append(f"![{block.caption}]({block.path.relative_to(out_dir).as_posix()})")
    return "\n\n".join(parts) + "\n"


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;"
    "font-size:13px;text-align:left}th{background:#f3f3f3}figure{margin:1em 0}figcaption{font-size:13px;color:#555}"
)


def to_html(blocks: Sequence[Block], title: str) -> str:
    esc = html.escape
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title><style>{_CSS}</style>"
        "</head><body>"
    ]
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            parts.append(f"<p>{esc(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{esc(c)}</th>" for c in block.header)
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>" for line in block.body)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        else:
            data = base64.b64encode(block.path.read_bytes()).decode("ascii")
            parts.append(
                f"<figure><img alt='{esc(block.caption)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{esc(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
