"""Parsers by name, as chosen in config (`parse.backend`)."""

from __future__ import annotations

from interleaf.parse.config import ParseConfig
from interleaf.parse.protocol import Parser


def get_parser(config: ParseConfig) -> Parser:
    if config.backend == "layout":
        from interleaf.parse.layout_parser import LayoutParser

        return LayoutParser(config.layout, config.pages_per_chunk)
    if config.backend == "mineru":
        from interleaf.parse.mineru_parser import MineruParser

        return MineruParser(config.mineru, config.pages_per_chunk)
    raise ValueError(f"unknown parse backend {config.backend!r}")
