"""Parsers by name, as chosen in config (`parse.backend`)."""

from __future__ import annotations

from interleaf.parse.config import ParseConfig
from interleaf.parse.protocol import Parser


def get_parser(config: ParseConfig) -> Parser:
    if config.backend == "layout":
        from interleaf.parse.layout.parser import LayoutParser

        return LayoutParser(config.layout, config.pages_per_chunk)
    if config.backend == "mineru":
        from interleaf.parse.mineru.parser import MineruParser

        return MineruParser(config.mineru, config.pages_per_chunk)
    if config.backend == "content_list":
        from interleaf.parse.mineru.content_list_parser import ContentListParser

        return ContentListParser(config.content_list)
    raise ValueError(f"unknown parse backend {config.backend!r}")
