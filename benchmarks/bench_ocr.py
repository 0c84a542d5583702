"""OCR of figure and table crops (describe's readings): what the text detector's input size, the
recognizer's batch and padding and the crops' resolution cost, and what they keep (`make bench`, OCR
part).

The crops are the image quotes of docs/ + scale/, parsed into a warehouse first (describe off: not
timed). Two sets, each read under every setting in a fresh process:

- crops whose box holds a text layer (describe reads those from the text layer, not by OCR), a
  sample: rendered and OCR'd anyway, their words are scored against the text layer's (word
  precision and recall, case-folded);
- crops describe does read by OCR (raster: screenshots, scans), a sample plus every one on a page
  that holds the evidence of a dev-set question: no ground truth, so the share of the words the
  default setting reads that each setting also reads, and the needles (qa_dev*.jsonl) found.

For each setting: OCR CPU seconds, and the largest memory one read took above what its process held
before it (malloc trimmed and the peak counter reset before each read: a page worker's peak).

    python benchmarks/bench_ocr.py [--corpus ../shared/corpus] [--warehouse DIR] [--sample N] [--settings I ...]
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@dataclass(frozen=True)
class Setting:
    label: str
    det_max_side: int | None  # RapidOcrConfig.det_max_side
    rec_batch: int  # lines recognised per batch
    dpi: int  # crops rendered at
    textline_orientation: str = "vertical"  # RapidOcrConfig.textline_orientation
    # RapidOCR pads each line to at least this width at the recognizer's 48 px height (its
    # Rec.rec_img_shape, 320 as PaddleOCR trains it); 8, the recognizer's stride, reads each line at
    # its own width
    rec_min_width: int = 320


SETTINGS = (
    Setting("detector <= 1280 px, 1 line a batch, every line's orientation checked (before)", 1280, 1, 216, "all"),
    Setting("detector <= 1280 px, 1 line a batch, vertical lines' orientation checked (the default)", 1280, 1, 216),
    Setting("detector <= 1280 px, 1 line a batch, no orientation checked", 1280, 1, 216, "off"),
    Setting("detector <= 1024 px, 1 line a batch, vertical lines' orientation checked", 1024, 1, 216),
    Setting("crops at 144 dpi, detector <= 1280 px, 1 line a batch, vertical lines' orientation checked", 1280, 1, 144),
    Setting(
        "detector <= 1280 px, 1 line a batch, vertical lines' orientation checked, lines not padded to 320 px",
        1280,
        1,
        216,
        rec_min_width=8,
    ),
)
DEFAULT = 1  # SETTINGS[DEFAULT] is what configs/default.yaml and the engine do


def _words(text: str) -> collections.Counter[str]:
    return collections.Counter(t for t in re.sub(r"[^\w.%-]+", " ", text.lower()).split() if t)


def ingest(corpus: Path, root: Path) -> Path:
    env = {**os.environ, "INTERLEAF_WAREHOUSE": str(root / "wh"), "PREFECT_HOME": str(root / ".prefect")}
    # describe off and BM25 alone: the crops need the quotes and page texts, not MiniLM's vectors
    command = [sys.executable, "-m", "interleaf.cli", "--set", "describe.kinds=[]"]
    command += ["--set", "index.retrievers=[{name: bm25, kind: bm25}]", "ingest"]
    subprocess.run([*command, str(corpus / "docs"), str(corpus / "scale")], cwd=REPO, env=env, check=True)
    return root / "wh"


def crops(warehouse: Path, corpus: Path, sample: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(crops with a text layer, each with its words as `truth`; raster crops), sampled (seed 0)."""
    import pymupdf

    from interleaf.config import load_settings
    from interleaf.describe.reading import page_texts
    from interleaf.describe.vector_text import use_vector_text
    from interleaf.pdf.words import words_in_box
    from warehouse import Warehouse
    from warehouse.catalog import connect

    ocr = load_settings().describe.ocr
    con = connect(Warehouse(warehouse))
    try:
        columns = "q.quote_id, d.name, d.path, q.page_idx, q.bbox, p.has_text_layer, p.ocr_used"
        rows = con.sql(
            f"SELECT {columns} FROM quotes q JOIN documents d USING (doc_id) JOIN pages p "
            "ON p.doc_id = q.doc_id AND p.page_idx = q.page_idx "
            "WHERE q.kind IN ('figure', 'table', 'equation') AND q.img_path IS NOT NULL ORDER BY q.quote_id"
        ).fetchall()
    finally:
        con.close()
    layered, raster = [], []
    for qid, name, path, page_idx, bbox, has_layer, ocr_used in rows:
        with pymupdf.open(path) as pdf:
            info = {page_idx: {"has_text_layer": has_layer, "ocr_used": ocr_used}}
            page = page_texts(pdf, info, {page_idx})[page_idx]
        box = tuple(bbox)
        words = words_in_box(page.words, box)
        crop = {"quote_id": qid, "doc": name, "path": path, "page_idx": page_idx, "bbox": list(box)}
        if use_vector_text(words, box, page.image_rects, ocr.min_vector_words, ocr.max_raster_share):
            layered.append(crop | {"truth": " ".join(w.text for w in words)})
        else:
            raster.append(crop)
    evidence = {(e["doc"], e["page"] - 1) for e in needles(corpus)}
    on_evidence = [c for c in raster if (c["doc"], c["page_idx"]) in evidence]
    rng = random.Random(0)
    picked = rng.sample(raster, min(sample, len(raster)))
    picked += [c for c in on_evidence if c not in picked]
    return rng.sample(layered, min(sample, len(layered))), picked


def needles(corpus: Path) -> list[dict[str, Any]]:
    out = []
    for name in ("qa_dev.jsonl", "qa_dev_long.jsonl", "qa_dev_answers.jsonl"):
        for line in (corpus / name).read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                out += [e | {"doc": item["doc"], "file": name} for e in item["evidence"] if item.get("doc")]
    return out


def read_all(setting: Setting, items: list[dict[str, Any]]) -> dict[str, Any]:
    """In a fresh process: every crop read under `setting`, its text, CPU and per-read peak."""
    import psutil
    import pymupdf

    from interleaf.pdf.ocr.config import RapidOcrConfig
    from interleaf.pdf.ocr.protocol import OcrError
    from interleaf.pdf.ocr.rapidocr_engine import RapidOcrEngine, rapidocr_engine
    from interleaf.pdf.render import render_bgr

    config = RapidOcrConfig(
        threads=1, det_max_side=setting.det_max_side, textline_orientation=setting.textline_orientation
    )
    engine = RapidOcrEngine(config)
    # the recognizer's batch and padding are fixed in rapidocr_engine; this bench sets them to compare
    recognizer = rapidocr_engine(1)._load_rec_model()
    recognizer.rec_batch_num = setting.rec_batch
    recognizer.rec_image_shape = [*recognizer.rec_image_shape[:2], setting.rec_min_width]
    libc = ctypes.CDLL("libc.so.6")
    texts, cpu, peak = {}, 0.0, 0.0
    documents: dict[str, Any] = {}
    for item in items:
        pdf = documents.setdefault(item["path"], pymupdf.open(item["path"]))
        image = render_bgr(pdf[item["page_idx"]], setting.dpi, tuple(item["bbox"]))
        libc.malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        before = psutil.Process().memory_info().rss
        started = time.process_time()
        try:
            lines = [line.text for line in engine.read(image) if line.conf >= 0.5]
        except OcrError:  # a box describe would reject too (an empty render)
            lines = []
        cpu += time.process_time() - started
        high = int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) * 1024
        peak = max(peak, (high - before) / 2**20)
        texts[item["quote_id"]] = " ".join(lines)
    return {"texts": texts, "cpu": cpu, "peak_mb": peak}


def run_setting(setting: Setting, items: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    given, out = work / "items.json", work / "read.json"
    given.write_text(json.dumps(items))
    subprocess.run(
        [sys.executable, __file__, "--read", json.dumps(asdict(setting)), str(given), str(out)], cwd=REPO, check=True
    )
    return json.loads(out.read_text())


def main() -> None:
    exit_on_sigterm()
    from interleaf.evidence import contains_needle  # the corpus README's matching, as evaluate's

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--corpus", type=Path, default=Path(os.environ.get("INTERLEAF_CORPUS", REPO.parent / "shared" / "corpus"))
    )
    ap.add_argument(
        "--warehouse", type=Path, help="docs/ + scale/ already ingested (default: parsed into a temporary one)"
    )
    ap.add_argument("--sample", type=int, default=40, help="crops of each set (seed 0)")
    ap.add_argument(
        "--settings",
        type=int,
        nargs="+",
        choices=range(len(SETTINGS)),
        help=f"which settings to read, by position (0-{len(SETTINGS) - 1}; each takes minutes); the default's "
        f"({DEFAULT}) is read too, as the raster crops' reference",
    )
    ap.add_argument("--read", nargs=3, help=argparse.SUPPRESS)  # the per-setting worker process
    args = ap.parse_args()
    if args.read:
        setting, items, out = json.loads(args.read[0]), json.loads(Path(args.read[1]).read_text()), args.read[2]
        Path(out).write_text(json.dumps(read_all(Setting(**setting), items)))
        return
    settings = [s for i, s in enumerate(SETTINGS) if args.settings is None or i in {DEFAULT, *args.settings}]
    begun = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-ocr-") as tmp:
        work = Path(tmp)
        warehouse = args.warehouse or ingest(args.corpus, work)
        layered, raster = crops(warehouse, args.corpus, args.sample)
        items = layered + raster
        results = [run_setting(s, items, work) for s in settings]
    truth = {c["quote_id"]: _words(c["truth"]) for c in layered}
    reference = results[settings.index(SETTINGS[DEFAULT])]["texts"]
    evidence = [
        e for e in needles(args.corpus) if any((c["doc"], c["page_idx"]) == (e["doc"], e["page"] - 1) for c in raster)
    ]
    print(
        f"OCR of crops: {len(layered)} with a text layer (scored against it), {len(raster)} raster "
        f"(the default's words as reference; {len(evidence)} dev-set needles on their pages), seed 0"
    )
    found_by: list[set[int]] = []
    for result in results:
        texts = result["texts"]
        found_by.append(
            {
                i
                for i, e in enumerate(evidence)
                if contains_needle(
                    (texts[c["quote_id"]] for c in raster if (c["doc"], c["page_idx"]) == (e["doc"], e["page"] - 1)),
                    e["needle"],
                )
            }
        )
    readable = set().union(*found_by)
    for setting, result, found in zip(settings, results, found_by, strict=True):
        texts = result["texts"]
        hit = sum(sum((truth[q] & _words(texts[q])).values()) for q in truth)
        read = sum(sum(_words(texts[q]).values()) for q in truth)
        wanted = sum(sum(t.values()) for t in truth.values())
        kept = sum(sum((_words(reference[c["quote_id"]]) & _words(texts[c["quote_id"]])).values()) for c in raster)
        total = sum(sum(_words(reference[c["quote_id"]]).values()) for c in raster)
        print(
            f"  {setting.label}: OCR CPU {result['cpu']:.0f} s; text-layer crops word P {hit / max(read, 1):.3f} "
            f"R {hit / max(wanted, 1):.3f}; raster crops {100 * kept / max(total, 1):.1f}% of the default's words; "
            f"needles {len(found)} of {len(readable)}; largest read +{result['peak_mb']:.0f} MB"
        )
    print(f"bench_ocr took {time.perf_counter() - begun:.0f} s")


if __name__ == "__main__":
    main()
