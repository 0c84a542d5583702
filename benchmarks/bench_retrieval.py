"""Retrieval latency and index build rate: `make bench` (retrieval part).

Over a warehouse holding the whole corpus (docs/ and scale/; ingested first when absent, which
takes several minutes), prints index build rate per retriever (quotes/s, measured by re-encoding
a sample without the cache) and query latency p50/p95 for expand + retrieve + fuse, and with the
configured reranker, in corpus scope (the worst case: every quote is a candidate).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from flows.plans import open_index  # noqa: E402
from interleaf.config import load_settings  # noqa: E402
from interleaf.evaluate.recall import read_qa  # noqa: E402
from interleaf.expand.protocol import Clause  # noqa: E402
from interleaf.expand.registry import get_expander  # noqa: E402
from interleaf.index.registry import get_retriever  # noqa: E402
from interleaf.index.stage import corpus_for  # noqa: E402
from interleaf.retrieve.registry import get_reranker  # noqa: E402
from interleaf.retrieve.stage import Question, retrieve  # noqa: E402
from warehouse import Warehouse  # noqa: E402
from warehouse.catalog import connect  # noqa: E402

TABLES = ("quotes", "documents", "quote_texts")


def percentiles(samples: list[float]) -> str:
    ms = np.asarray(samples) * 1000
    return f"p50 {np.percentile(ms, 50):7.1f} ms   p95 {np.percentile(ms, 95):7.1f} ms   (n={len(ms)})"


def compare_with_sentence_transformers(spec: Any, sample: Any, onnx_rows: Any, onnx_rate: float) -> None:
    """The same sample through sentence-transformers (torch): its rate, and how far the vectors differ."""
    reference = get_retriever(spec.model_copy(update={"backend": "sentence-transformers"}))
    reference.encode(sample.subset([0]), None, "")  # model load is not the rate
    started = time.perf_counter()
    rows, _ = reference.encode(sample, None, "")
    rate = len(sample) / (time.perf_counter() - started)
    ours = np.asarray(onnx_rows.column("vector").to_pylist(), dtype=np.float32)
    theirs = np.asarray(rows.column("vector").to_pylist(), dtype=np.float32)
    cosine = (ours * theirs).sum(axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    print(
        f"  {spec.name:10s} {'dense/sentence-tr.':18s} {rate:9.1f} quotes/s   onnx / sentence-transformers "
        f"{onnx_rate / rate:.2f}x, min cosine {cosine.min():.7f}"
    )


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__)
    default_corpus = os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--corpus", default=default_corpus, help="folder holding docs/, scale/ and qa_dev.jsonl")
    parser.add_argument("--warehouse", default=os.environ.get("BENCH_WAREHOUSE", "/tmp/interleaf-bench-retrieval"))
    parser.add_argument("--sample", type=int, default=200, help="quotes re-encoded per retriever for the build rate")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions; the first warms up")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    begun = time.perf_counter()
    env = {**os.environ, "INTERLEAF_WAREHOUSE": args.warehouse}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "interleaf.cli", "ingest", str(corpus / "docs"), str(corpus / "scale")],
        env=env,
        check=True,
    )
    print(f"ingest (a no-op when the warehouse is current): {time.perf_counter() - started:.1f}s")
    settings = load_settings()
    wh = Warehouse(args.warehouse)
    con = connect(wh)
    quotes, documents, quote_texts = (con.sql(f"SELECT * FROM {t}").to_arrow_table() for t in TABLES)
    con.close()

    print("index build rate (fresh encode, no cache):")
    for spec in settings.index.retrievers:
        full = corpus_for(spec, settings.index, quotes, documents, quote_texts)
        sample = full.subset(list(range(min(args.sample, len(full)))))
        retriever = get_retriever(spec)
        retriever.encode(full.subset([0]), None, str(wh.root))  # model load is not the rate
        started = time.perf_counter()
        sample_rows, _ = retriever.encode(sample, None, str(wh.root))
        if spec.kind == "bm25":
            started_load = time.perf_counter()
            rows, _ = retriever.encode(full, None, str(wh.root))
            retriever.load(full, rows)
            rate = len(full) / (time.perf_counter() - started_load)
        else:
            rate = len(sample) / (time.perf_counter() - started)
        kind = f"{spec.kind}/{spec.backend}" if spec.kind == "dense" else spec.kind  # which encoder was timed
        print(f"  {spec.name:10s} {kind:18s} {rate:9.1f} quotes/s")
        if spec.kind == "dense" and spec.backend == "onnx":
            compare_with_sentence_transformers(spec, sample, sample_rows, rate)

    index = open_index(wh, settings)
    print(f"index: {len(index.corpus)} quotes, {len(set(index.corpus.doc_ids))} documents")
    items = read_qa(corpus / "qa_dev.jsonl")
    expander = get_expander(settings.expand)
    reranker = get_reranker(settings.retrieve.rerank)
    corpus_scope = settings.retrieve.model_copy(update={"scope": "corpus"})
    for label, rr in (("expand + retrieve + fuse", None), (f"+ rerank ({settings.retrieve.rerank.backend})", reranker)):
        times: list[float] = []
        for _ in range(max(2, args.rounds)):
            for item in items:
                started = time.perf_counter()
                clauses = expander.expand(item.question) if expander else [Clause(item.question, "question", 1.0)]
                retrieve(index, [Question(item.id, item.question)], [clauses], corpus_scope, settings.expand, rr)
                times.append(time.perf_counter() - started)
        print(f"query latency, corpus scope, {label:28s} {percentiles(times[len(items) :])}")
    print(f"bench_retrieval took {time.perf_counter() - begun:.0f}s")


if __name__ == "__main__":
    main()
