"""Describe-stage throughput over the corpus's docs/: image quotes/s for OCR-text (text layer or
RapidOCR, as the stage chooses) and for the offline describer. Parses docs/ into a temporary
warehouse first (not timed), then times the two parts separately with a cold content cache.

    python benchmarks/bench_describe.py [--corpus ../shared/corpus] [--warehouse DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", default=os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus")))
    ap.add_argument("--warehouse", help="an already-ingested warehouse (default: parse docs/ into a temporary one)")
    args = ap.parse_args()

    import pymupdf

    from flows.plans import ingest_stages
    from interleaf.config import load_settings
    from interleaf.describe.offline_describer import OfflineDescriber, referring_sentences
    from interleaf.describe.protocol import DescribeRequest
    from interleaf.describe.reading import ReadingSettings, page_texts, read_quote, renderer
    from interleaf.describe.registry import get_ocr_engine
    from interleaf.describe.vector_text import PageText
    from interleaf.kinds import PROSE_KINDS
    from interleaf.pdf.words import words_in_box
    from interleaf.text.references import caption_label
    from pipeline.stage_task import Plan
    from warehouse import Warehouse

    settings = load_settings()
    root = Path(args.warehouse or tempfile.mkdtemp(prefix="bench-describe-"))
    if not args.warehouse:
        env = {**os.environ, "INTERLEAF_WAREHOUSE": str(root / "wh"), "PREFECT_HOME": str(root / ".prefect")}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "interleaf.cli",
                "--set",
                "describe.kinds=[]",
                "ingest",
                str(Path(args.corpus) / "docs"),
            ],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
        )
        root = root / "wh"
    wh = Warehouse(root)
    parse_fp = Plan.of(ingest_stages(settings)).fingerprints["parse"]
    cfg = settings.describe
    ocr = get_ocr_engine(cfg.ocr)
    reading = ReadingSettings("bench", cfg.ocr.min_conf, cfg.ocr.min_vector_words, cfg.ocr.max_raster_share)
    requests, read_s, by_source = [], 0.0, {}
    docs = wh.read_table("documents", parse_fp).to_pylist()
    for doc in docs:
        quotes = wh.read_part("quotes", parse_fp, doc["doc_id"]).to_pylist()
        pages = {p["page_idx"]: p for p in wh.read_part("pages", parse_fp, doc["doc_id"]).to_pylist()}
        targets = [q for q in quotes if q["kind"] in ("figure", "table", "equation") and q["img_path"]]
        texts = [q["text"] for q in quotes if q["kind"] in PROSE_KINDS and q["text"]]
        with pymupdf.open(doc["path"]) as pdf:
            started = time.perf_counter()
            page_text = page_texts(pdf, pages, {q["page_idx"] for q in targets})
            render = renderer(pdf, cfg.ocr.dpi)
            for q in targets:
                page = page_text.get(q["page_idx"], PageText((), ()))
                got = read_quote(
                    q,
                    words_in_box(page.words, tuple(q["bbox"])),
                    page,
                    lambda q=q, render=render: render(q),
                    ocr,
                    reading,
                )
                by_source[got["ocr_source"]] = by_source.get(got["ocr_source"], 0) + 1
                refs = referring_sentences(caption_label(q["caption"]), texts, cfg.max_references)
                requests.append(
                    DescribeRequest(
                        q["quote_id"],
                        q["kind"],
                        q["page_idx"],
                        b"",
                        q["caption"],
                        got["ocr_text"],
                        got["ocr_source"],
                        got["table_md"],
                        tuple(refs),
                    )
                )
            read_s += time.perf_counter() - started
    started = time.perf_counter()
    OfflineDescriber().describe(requests)
    describe_s = time.perf_counter() - started
    n = len(requests)
    print(f"describe: {n} image quotes in {len(docs)} documents; OCR-text sources {by_source}")
    print(f"describe: OCR-text (text layer + {ocr.name})  {n / read_s:8.2f} image quotes/s  ({read_s:.1f} s)")
    rate = n / max(describe_s, 1e-9)
    print(f"describe: offline describer             {rate:8.0f} image quotes/s  ({describe_s * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
