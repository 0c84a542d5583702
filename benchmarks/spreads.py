"""Sheets read as two printed pages (a spread: interleaf/parse/layout/spread.py) in folders of PDFs,
and what the check costs: each page's words as the parser reads them (the text layer; with `--ocr`,
RapidOCR of the landscape pages without a usable one, as parse does: slow), the spreads listed by document,
and the check's time beside the words' own.

    python benchmarks/spreads.py ../shared/corpus/docs ../shared/benchmarks/mmlongbench-dev/pdfs [--ocr]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folders", nargs="+", type=Path, help="folders of PDFs")
    ap.add_argument("--ocr", action="store_true", help="read pages without a usable text layer by OCR, as parse does")
    args = ap.parse_args()

    from interleaf.parse.config import LayoutConfig
    from interleaf.parse.layout.model import model_input
    from interleaf.parse.layout.parser import _page_words
    from interleaf.parse.layout.spread import find_gutter
    from interleaf.pdf.mupdf import pymupdf
    from interleaf.pdf.words import text_layer_words

    cfg = LayoutConfig()
    for folder in args.folders:
        pages = unread = 0
        words_s = check_s = 0.0
        found: dict[str, list[int]] = {}
        for pdf in sorted(folder.glob("*.pdf")):
            with pymupdf.open(pdf) as doc:
                for page in doc:
                    page.set_rotation(0)  # as parse reads it
                    started = time.perf_counter()
                    if args.ocr and page.rect.height >= page.rect.width:
                        words = []  # a portrait page is never a spread: no OCR for it
                    elif args.ocr:
                        words, _, _ = _page_words(page, model_input(page), cfg)
                    else:
                        words, _ = text_layer_words(page)
                        unread += not words
                    checked = time.perf_counter()
                    gutter = find_gutter(words, page.rect.width, page.rect.height)
                    words_s += checked - started
                    check_s += time.perf_counter() - checked
                    pages += 1
                    if gutter is not None:
                        found.setdefault(pdf.name, []).append(page.number + 1)
        spreads = sum(len(v) for v in found.values())
        print(f"{folder}: {pages} pages, {spreads} spreads; check {check_s * 1000:.1f} ms, words {words_s:.1f} s")
        if unread:
            print(f"  {unread} pages without text-layer words not checked (--ocr reads them)")
        for name, numbers in found.items():
            print(f"  {name}: pages {', '.join(map(str, numbers))}")


if __name__ == "__main__":
    main()
