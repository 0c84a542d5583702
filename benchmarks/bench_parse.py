"""Parse throughput and memory: `make bench` (parse part).

Prints, for each backend, pages/s over docs/ (text-layer documents, and all of docs/ including
OCR pages) and over scale/, the ratio to bare PyMuPDF text extraction of the same pages measured
in the same run, the needle share over all of docs/ (qa_dev.jsonl's text evidence found in a quote
of its gold page), and the peak RSS of a real `interleaf ingest` of the 619-page document.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import psutil
import pymupdf

from interleaf.config import load_settings
from interleaf.errors import DocumentError
from interleaf.evidence import contains_needle
from interleaf.parse.registry import get_parser
from interleaf.pdf.words import text_layer_usable, text_layer_words
from interleaf.runtime.executor import page_map

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm, stopped_at_exit  # noqa: E402

BIG = "game-manual-619p.pdf"


def needs_ocr(path: Path, min_share: float) -> bool:
    with pymupdf.open(path) as doc:
        return any(not text_layer_usable(*text_layer_words(page), min_share) for page in doc)


def pymupdf_seconds(files: list[Path]) -> tuple[int, float]:
    started, pages = time.perf_counter(), 0
    for f in files:
        with pymupdf.open(f) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - started


# (document, page_idx) -> the texts of the quotes parsed there
PageTexts = dict[tuple[str, int], list[str | None]]


def backend_seconds(backend: str, files: list[Path]) -> tuple[int, float, list[str], PageTexts]:
    settings = load_settings(overrides=[f"parse.backend={backend}"])
    parser = get_parser(settings.parse)
    mapper = page_map(settings.parse.workers)
    started, pages, rejected = time.perf_counter(), 0, []
    texts: PageTexts = {}
    for f in files:
        try:
            parsed = parser.parse(f.read_bytes(), f.name, mapper)
        except DocumentError as exc:  # as in an ingest: a reject, and the batch goes on
            rejected.append(f"{f.name}: {exc.reason[:80]}")
            continue
        pages += parsed.page_count
        for q in parsed.quotes:
            texts.setdefault((f.name, q.page_idx), []).extend((q.text, q.caption, q.footnote))
    return pages, time.perf_counter() - started, rejected, texts


def needle_share(items: Iterable[dict], texts: PageTexts) -> tuple[int, int, list[str]]:
    """(found, asked, the misses): the needles of the items' text evidence (qa_dev.jsonl's lines) in
    a quote of their gold page (a rejected document's needles are missed)."""
    found, asked, misses = 0, 0, []
    for item in items:
        for evidence in item.get("evidence", []):
            if evidence.get("needle") and not evidence.get("needle_in_image"):
                asked += 1
                if contains_needle(texts.get((item["doc"], evidence["page"] - 1), []), evidence["needle"]):
                    found += 1
                else:
                    misses.append(f"{item['id']} p{evidence['page']} {evidence['needle']!r}")
    return found, asked, misses


def _role(proc: psutil.Process, root: psutil.Process) -> str:
    if proc.pid == root.pid:
        return "ingest process"
    cmdline = " ".join(proc.cmdline())
    if cmdline.startswith("ray::"):  # a worker process of a Ray node names itself by what it runs
        return "Ray workers"
    if "forkserver" in cmdline:
        return "page workers"  # the forkserver and the workers it forked
    return "Prefect server" if "uvicorn" in cmdline or "prefect" in cmdline else "other"


def tree_usage(
    root: psutil.Process, cpu: dict[int, tuple[str, float]] | None = None
) -> tuple[int, int, dict[str, int]]:
    """(summed RSS, summed PSS, PSS by role) of a process and its children. RSS counts pages shared
    between the forked page workers once per process; PSS splits them, so its sum is the real footprint.
    With `cpu`, each process's role and CPU seconds so far (user + system) go there by pid."""
    rss = pss = 0
    roles: dict[str, int] = {}
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0, 0, roles
    for p in procs:
        with contextlib.suppress(psutil.Error):
            info = p.memory_full_info()
            rss += info.rss
            share = getattr(info, "pss", info.rss)
            pss += share
            role = _role(p, root)
            roles[role] = roles.get(role, 0) + share
            if cpu is not None:
                times = p.cpu_times()
                cpu[p.pid] = (role, times.user + times.system)
    return rss, pss, roles


def peak_memory_of_ingest(pdf: Path) -> tuple[float, float, float, dict[str, float]]:
    """Peak summed RSS and PSS (MB) of a real `interleaf ingest` of `pdf`, its seconds, and the PSS
    (MB) of each kind of process at the PSS peak."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "INTERLEAF_WAREHOUSE": f"{tmp}/wh", "PREFECT_HOME": f"{tmp}/prefect"}
        started = time.perf_counter()
        command = [sys.executable, "-m", "interleaf.cli", "ingest", str(pdf)]
        out = subprocess.DEVNULL
        with stopped_at_exit(subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=out)) as proc:
            root, peak_rss, peak_pss, at_peak = psutil.Process(proc.pid), 0, 0, {}
            while proc.poll() is None:
                rss, pss, roles = tree_usage(root)
                peak_rss = max(peak_rss, rss)
                if pss > peak_pss:
                    peak_pss, at_peak = pss, roles
                time.sleep(0.2)
        if proc.returncode != 0:
            raise SystemExit(f"ingest of {pdf} failed with exit code {proc.returncode}")
        by_role = {role: v / 2**20 for role, v in at_peak.items()}
        return peak_rss / 2**20, peak_pss / 2**20, time.perf_counter() - started, by_role


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--backends", default="layout,mineru")
    ap.add_argument("--sets", default="docs,scale", help="docs, scale or both (scale/ also measures peak memory)")
    args = ap.parse_args()
    docs = sorted((args.corpus / "docs").glob("*.pdf"))
    scale = sorted((args.corpus / "scale").glob("*.pdf"))
    min_share = load_settings().parse.layout.min_clean_token_share
    text_docs = [f for f in docs if not needs_ocr(f, min_share)]
    sets = {"docs/ text-layer": text_docs, "docs/ all": docs, "scale/": scale}
    chosen = args.sets.split(",")
    sets = {label: files for label, files in sets.items() if label.split("/")[0] in chosen}

    print(f"parse benchmark — {os.cpu_count()} cores; text-layer docs: {len(text_docs)} of {len(docs)}")
    print(f"{'set':18} {'backend':8} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'pymupdf p/s':>12} {'ratio':>8}")
    rates: dict[tuple[str, str], float] = {}
    for label, files in sets.items():
        base_pages, base_s = pymupdf_seconds(files)
        for backend in args.backends.split(","):
            try:
                pages, seconds, rejected, texts = backend_seconds(backend, files)
            except Exception as exc:
                print(f"{label:18} {backend:8} failed: {type(exc).__name__}: {exc}")
                continue
            rate = pages / seconds
            rates[(label, backend)] = rate
            print(
                f"{label:18} {backend:8} {pages:6d} {seconds:8.1f} {rate:8.2f} {base_pages / base_s:12.0f} "
                f"{rate / (base_pages / base_s):8.4f}"
            )
            for line in rejected:
                print(f"{'':18} {backend:8} rejected {line}")
            if label == "docs/ all" and (args.corpus / "qa_dev.jsonl").exists():
                lines = (args.corpus / "qa_dev.jsonl").read_text().splitlines()
                found, asked, _ = needle_share((json.loads(line) for line in lines if line.strip()), texts)
                print(f"{'':18} {backend:8} needle share {found / max(asked, 1):.3f} ({found} of {asked})")
    key = "docs/ text-layer"
    if (key, "layout") in rates and (key, "mineru") in rates:
        ratio = rates[(key, "layout")] / rates[(key, "mineru")]
        print(
            f"layout / mineru-flash on text-layer pages: {ratio:.2f} (target >= 1.0); "
            f"layout {rates[(key, 'layout')]:.2f} pages/s (target >= 4)"
        )
    big = args.corpus / "scale" / BIG
    if big.exists() and "scale" in chosen:
        rss_mb, pss_mb, seconds, by_role = peak_memory_of_ingest(big)
        print(
            f"peak memory ingesting {BIG} (process tree): PSS {pss_mb:.0f} MB, RSS summed {rss_mb:.0f} MB "
            f"(target < 1536 MB); {seconds:.1f} s end to end"
        )
        print("  PSS at the peak: " + ", ".join(f"{role} {mb:.0f} MB" for role, mb in sorted(by_role.items())))


if __name__ == "__main__":
    main()
