"""`interleaf ask` latency with the offline generator: cold (process start to printed answer, a new
process per question) and warm (question to answer in one process, the index already loaded).

Each question is asked once cold and then warm; a warm question is one never asked before in the
process, so it runs expand, retrieve and generate for real (nothing comes from the warehouse).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402
from flows.query import answer_views, run_queries  # noqa: E402
from interleaf.config import load_settings  # noqa: E402
from interleaf.questions.stage import single_question  # noqa: E402


def percentiles(samples: list[float]) -> str:
    ms = np.asarray(samples) * 1000
    return f"p50 {np.percentile(ms, 50):8.1f} ms   p95 {np.percentile(ms, 95):8.1f} ms   (n={len(ms)})"


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__)
    default_corpus = os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--corpus", default=default_corpus)
    parser.add_argument("--warehouse", default=os.environ.get("BENCH_WAREHOUSE", "/tmp/interleaf-bench-answer"))
    parser.add_argument("--questions", type=int, default=12, help="questions of qa_dev.jsonl asked")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    env = {**os.environ, "INTERLEAF_WAREHOUSE": args.warehouse}
    subprocess.run([sys.executable, "-m", "interleaf.cli", "ingest", str(corpus / "docs")], env=env, check=True)
    items = [json.loads(line) for line in (corpus / "qa_dev.jsonl").read_text().splitlines() if line.strip()]
    items = items[: args.questions]

    cold = []
    for item in items:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "interleaf.cli", "ask", item["question"], "--doc", item["doc"]],
            env=env,
            check=True,
            capture_output=True,
        )
        cold.append(time.perf_counter() - started)

    settings = load_settings()
    root = Path(args.warehouse)
    warm = []
    # the first question loads the index into the process; it is not a warm sample
    for i, item in enumerate([{"question": "What is this document about?", "doc": items[0]["doc"]}, *items]):
        question = single_question(item["question"] + " (warm)", [item["doc"]])
        started = time.perf_counter()
        run = run_queries(root, settings, question, ["doc"], use_prefect=False, evaluate=False)
        answer_views(run, "doc")
        if i:
            warm.append(time.perf_counter() - started)
    print(f"ask, offline generator, doc scope, {len(items)} questions of qa_dev.jsonl:")
    print(f"  cold (process start to printed answer)  {percentiles(cold)}")
    print(f"  warm (question to answer, index loaded) {percentiles(warm)}")


if __name__ == "__main__":
    main()
