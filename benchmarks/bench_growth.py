"""Growth: what a question and an ingest cost as the corpus grows (`make bench`, growth part).

Builds a corpus of one- and two-page PDFs cut from the shared corpus's pages (docs/ and scale/:
real text, tables and figures; each document a different page or pair of pages), and grows one
warehouse through the sizes asked (50, 500 and 2,000 documents by default), as a scheduled ingest
would. At each size it prints
- ingest seconds per document added (the `interleaf ingest` command's wall time over the
  documents it added);
- files in the warehouse per document, Parquet and state apart from crops (one PNG per figure);
- a cold `interleaf ask` (a new process, a question not asked before; median of three);
- the server: its index load (`/healthz` load_seconds) and warm `/v1/ask` p50 over ten new questions;
- `interleaf sql "select count(*) from quotes"` and `interleaf gc`, each a whole command;
and, last, each figure's ratio to the first size's. The table goes to docs/measured/growth.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pymupdf

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.load import free_port, start_server, wait_healthy  # noqa: E402
from benchmarks.stopping import exit_on_sigterm  # noqa: E402
from interleaf.measured import write_measured  # noqa: E402

COLUMNS = ("ingest s/doc", "files/doc", "crops/doc", "cold ask s", "server load s", "warm ask p50 s", "sql s", "gc s")


def pages_of(corpus: Path) -> list[tuple[Path, int]]:
    files = sorted([*(corpus / "docs").glob("*.pdf"), *(corpus / "scale").glob("*.pdf")])
    return [(f, i) for f in files for i in range(pymupdf.open(f).page_count)]


def write_documents(pages: list[tuple[Path, int]], folder: Path, start: int, stop: int) -> None:
    """Documents start..stop-1: the even ones a page, the odd ones that page and the next; past the
    pages' count, pairs drawn further apart, so that no two documents are the same."""
    folder.mkdir(parents=True, exist_ok=True)
    opened: dict[Path, pymupdf.Document] = {}
    n = len(pages)
    for k in range(start, stop):
        first = (k * 7) % n
        chosen = [first] if k % 2 == 0 and k < n else [first, (first + 1 + k // n) % n]
        out = pymupdf.open()
        for idx in chosen:
            path, page = pages[idx]
            source = opened.setdefault(path, pymupdf.open(path))
            out.insert_pdf(source, from_page=page, to_page=page)
        out.save(folder / f"doc{k:05d}.pdf")


def questions(corpus: Path) -> list[str]:
    lines = []
    for name in ("qa_dev_long.jsonl", "qa_dev.jsonl", "qa_dev_answers.jsonl"):
        lines += [json.loads(x)["question"] for x in (corpus / name).read_text().splitlines() if x.strip()]
    return lines


def interleaf(root: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "interleaf.cli", "--warehouse", str(root), *args],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def count_files(root: Path) -> tuple[int, int]:
    crops = sum(1 for p in (root / "images").rglob("*") if p.is_file()) if (root / "images").is_dir() else 0
    total = sum(1 for p in root.rglob("*") if p.is_file())
    return total - crops, crops


def server_figures(root: Path, asked: list[str], scratch: Path) -> tuple[float, float]:
    port = free_port()
    log = scratch / "server.log"
    server = start_server(root, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        health = wait_healthy(url, server, log)
        while not health["index"]["loaded"] and health["index"]["error"] is None:
            time.sleep(0.5)
            health = httpx.get(f"{url}/healthz", timeout=5).json()
        load_s = health["index"]["load_seconds"]
        seconds = []
        with httpx.Client(base_url=url, timeout=120) as client:
            for question in asked:
                started = time.perf_counter()
                client.post("/v1/ask", json={"question": question}).raise_for_status()
                seconds.append(time.perf_counter() - started)
        return float(load_s), statistics.median(seconds)
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--sizes", default="50,500,2000", help="corpus sizes, ascending, comma-separated")
    parser.add_argument("--work", type=Path, help="where the corpus and warehouse grow (default: a temporary folder)")
    parser.add_argument("--measured", type=Path, default=REPO / "docs" / "measured" / "growth.md")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="interleaf-growth-"))
    folder, root = work / "pdfs", work / "warehouse"
    os.environ.setdefault("PREFECT_HOME", str(work / ".prefect-home"))
    pages = pages_of(args.corpus)
    pool = questions(args.corpus)
    rows: list[tuple[int, dict[str, float]]] = []
    have = len(list(folder.glob("*.pdf"))) if folder.is_dir() else 0
    for size in sizes:
        write_documents(pages, folder, have, size)
        added = size - have
        ingest_s = interleaf(root, "ingest", str(folder))
        have = size
        files, crops = count_files(root)
        asked, pool = pool[:13], pool[13:] + pool[:13]
        cold = statistics.median(interleaf(root, "ask", f"{q} ({size})") for q in asked[:3])
        load_s, warm = server_figures(root, [f"{q} ({size})" for q in asked[3:]], work)
        figures = {
            "ingest s/doc": ingest_s / max(added, 1),
            "files/doc": files / size,
            "crops/doc": crops / size,
            "cold ask s": cold,
            "server load s": load_s,
            "warm ask p50 s": warm,
            "sql s": interleaf(root, "sql", "select count(*) from quotes"),
            "gc s": interleaf(root, "gc"),
        }
        rows.append((size, figures))
        print(f"{size} documents: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True)
    text = table(rows)
    print(text)
    title = "Growth: cost per question and per document as the corpus grows"
    write_measured(args.measured, title, text, sys.argv, "python benchmarks/bench_growth.py")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


def table(rows: list[tuple[int, dict[str, float]]]) -> str:
    head = f"{'documents':>9}  " + "  ".join(f"{c:>14}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    for size, figures in rows:
        lines.append(f"{size:>9}  " + "  ".join(f"{figures[c]:>14.3f}" for c in COLUMNS))
    base = rows[0][1]
    for size, figures in rows[1:]:
        ratios = "  ".join(f"{figures[c] / base[c]:>13.2f}x" if base[c] else f"{'-':>14}" for c in COLUMNS)
        lines.append(f"{'÷' + str(rows[0][0]):>9}  " + ratios + f"   ({size} documents)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
