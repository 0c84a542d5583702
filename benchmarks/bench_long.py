"""Long documents: `make bench` (long-document part).

Over a warehouse holding the whole corpus (docs/ and scale/, ingested first when absent: about ten
minutes on two cores), prints
- recall@k on qa_dev_long.jsonl (questions about the two long manuals of scale/) in corpus scope,
  text and table evidence apart, and the qa_dev.jsonl table beside it;
- the index: quotes, sections, bytes on disk per table, and the memory the loaded index takes;
- query latency over the whole corpus for the long questions (expand + retrieve + fuse, with the
  lists asked within the sections a question names);
- what the structure pass adds to the ingest of scale/: its own time (outline, section tree,
  running furniture), timed again on the stored parse output, against the parse stage's ledger
  time; and the BM25 index build with section paths in its texts against the nearest title only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from flows.plans import open_index  # noqa: E402
from interleaf.config import Settings, load_settings  # noqa: E402
from interleaf.evaluate.recall import read_qa  # noqa: E402
from interleaf.expand.protocol import Clause  # noqa: E402
from interleaf.expand.registry import get_expander  # noqa: E402
from interleaf.index.registry import get_retriever  # noqa: E402
from interleaf.index.retriever_config import BM25Config, TextFields  # noqa: E402
from interleaf.index.stage import corpus_for  # noqa: E402
from interleaf.parse.stage import ParseOutput, with_structure  # noqa: E402
from interleaf.retrieve.stage import Question, retrieve  # noqa: E402
from interleaf.structure.outline import read_outline  # noqa: E402
from warehouse import Warehouse, schemas  # noqa: E402
from warehouse.catalog import connect  # noqa: E402


def cli(warehouse: str, *args: str) -> str:
    env = {**os.environ, "INTERLEAF_WAREHOUSE": warehouse}
    done = subprocess.run([sys.executable, "-m", "interleaf.cli", *args], env=env, check=True, capture_output=True)
    return done.stdout.decode()


def percentiles(samples: list[float]) -> str:
    ms = np.asarray(samples) * 1000
    return f"p50 {np.percentile(ms, 50):7.1f} ms   p95 {np.percentile(ms, 95):7.1f} ms   (n={len(ms)})"


def print_recall(warehouse: str, qa: Path, scopes: list[str]) -> None:
    args = ["eval", "--qa", str(qa), "--json", *(a for s in scopes for a in ("--scope", s))]
    payload = json.loads(cli(warehouse, *args))
    for result in payload["results"]:
        for group, by_k in result["recall"].items():
            cells = "  ".join(f"R@{k} {v:.3f}" for k, v in by_k.items())
            print(f"  {qa.name:20s} {result['scope']:6s} {group:6s} ({result['n'][group]:2d})  {cells}")


def table_bytes(wh: Warehouse, table: str) -> int:
    return sum(
        f.stat().st_size for fp in wh.current_fingerprints(table) for f in (wh.root / table / fp).glob("*.parquet")
    )


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def structure_share(wh: Warehouse, scale: Path) -> tuple[float, float]:
    """The structure pass again on each scale/ document's stored parse output, against the parse
    stage's time for it in the ledger (the run that parsed it under the current fingerprint)."""
    con = connect(wh)
    try:
        docs = con.sql("SELECT * FROM documents").to_arrow_table().to_pylist()
        parse_fp = wh.current_fingerprints("quotes")[0]
        ledger = con.sql(
            "SELECT inputs[1] AS doc_id, epoch(ended_at - started_at) AS s FROM runs"
            f" WHERE stage = 'parse' AND status = 'ok' AND fingerprint = '{parse_fp}'"
        ).to_arrow_table()
        parse_seconds = dict(zip(ledger.column("doc_id").to_pylist(), ledger.column("s").to_pylist(), strict=True))
        total_structure = total_parse = 0.0
        for doc in docs:
            if Path(doc["path"]).parent.resolve() != scale.resolve():
                continue
            where = f"WHERE doc_id = '{doc['doc_id']}'"
            pages = con.sql(f"SELECT * FROM pages {where}").to_arrow_table()
            quotes = con.sql(f"SELECT * FROM quotes {where} ORDER BY page_idx, layout_idx").to_arrow_table()
            documents = pa.Table.from_pylist([doc], schema=schemas.DOCUMENTS)
            data = Path(doc["path"]).read_bytes()
            started = time.perf_counter()
            out = with_structure(ParseOutput(documents, pages, quotes), doc["doc_id"], read_outline(data))
            seconds = time.perf_counter() - started
            parsed = parse_seconds.get(doc["doc_id"])
            total_structure += seconds
            total_parse += parsed or 0.0
            share = f"{100 * seconds / parsed:.2f}% of its parse stage's {parsed:.0f} s" if parsed else "no ledger row"
            print(
                f"  {doc['name']:28s} {doc['pages']:4d} pages  {out.sections.num_rows:4d} sections  "
                f"structure pass {seconds:5.2f} s = {share}"
            )
        if total_parse:
            share = 100 * total_structure / total_parse
            print(f"  scale/ in all: structure pass {total_structure:.2f} s = {share:.2f}% of its parse stage")
    finally:
        con.close()
    return total_structure, total_parse


def bm25_build(settings: Settings, quotes: pa.Table, documents: pa.Table, quote_texts: pa.Table) -> float:
    """BM25 over the whole corpus: texts with section paths and table context, and the nearest title only."""
    spec = next((s for s in settings.index.retrievers if s.kind == "bm25"), BM25Config(name="bm25"))
    seconds = []
    for label, fields in (
        ("section paths, table context", spec.fields),
        ("nearest title only", TextFields(section_source="title", table_context=False)),
    ):
        variant = spec.model_copy(update={"fields": fields})
        started = time.perf_counter()
        corpus = corpus_for(variant, settings.index, quotes, documents, quote_texts)
        composed = time.perf_counter() - started
        retriever = get_retriever(variant)
        rows, _ = retriever.encode(corpus, None, "")
        retriever.load(corpus, rows)
        mean_chars = sum(len(t) for t in corpus.texts) / len(corpus)
        seconds.append(time.perf_counter() - started)
        print(
            f"  {label:30s} compose {composed:5.2f} s, index {time.perf_counter() - started - composed:5.2f} s, "
            f"{mean_chars:6.0f} chars per quote"
        )
    return seconds[0] - seconds[1]


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__)
    default_corpus = os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--corpus", default=default_corpus, help="folder holding docs/, scale/ and the qa files")
    parser.add_argument("--warehouse", default=os.environ.get("BENCH_WAREHOUSE", "/tmp/interleaf-bench-retrieval"))
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions; the first warms up")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    begun = time.perf_counter()
    started = time.perf_counter()
    cli(args.warehouse, "ingest", str(corpus / "docs"), str(corpus / "scale"))
    print(f"ingest docs/ + scale/ (a no-op when the warehouse is current): {time.perf_counter() - started:.1f}s")

    print("recall, whole corpus indexed:")
    print_recall(args.warehouse, corpus / "qa_dev_long.jsonl", ["corpus"])
    print_recall(args.warehouse, corpus / "qa_dev.jsonl", ["doc", "corpus"])

    settings = load_settings()
    wh = Warehouse(args.warehouse)
    con = connect(wh)
    quotes, documents, quote_texts = (
        con.sql(f"SELECT * FROM {t}").to_arrow_table() for t in ("quotes", "documents", "quote_texts")
    )
    n_sections = con.sql("SELECT count(*) FROM sections").fetchall()[0][0]
    con.close()

    before = rss_mb()
    index = open_index(wh, settings)
    sizes = {t: table_bytes(wh, t) / 1e6 for t in ("index_texts", "quote_embeddings", "sections")}
    print(
        f"index: {len(index.corpus)} quotes, {n_sections} sections, {len(set(index.corpus.doc_ids))} documents; "
        "on disk "
        + ", ".join(f"{t} {mb:.1f} MB" for t, mb in sizes.items())
        + f"; loaded: peak RSS +{rss_mb() - before:.0f} MB"
    )

    items = read_qa(corpus / "qa_dev_long.jsonl")
    expander = get_expander(settings.expand)
    corpus_scope = settings.retrieve.model_copy(update={"scope": "corpus"})
    times: list[float] = []
    scoped = 0
    for round_ in range(max(2, args.rounds)):
        for item in items:
            started = time.perf_counter()
            clauses = expander.expand(item.question) if expander else [Clause(item.question, "question", 1.0)]
            [result] = retrieve(index, [Question(item.id, item.question)], [clauses], corpus_scope, settings.expand)
            times.append(time.perf_counter() - started)
            scoped += round_ == 0 and any(c.kind.startswith("scope:") for c in result.clauses)
    label = f"qa_dev_long ({scoped}/{len(items)} name a section)"
    print(f"query latency, corpus scope, {label}: {percentiles(times[len(items) :])}")

    print("what structure adds to the ingest of scale/:")
    structure, parse = structure_share(wh, corpus / "scale")
    print("  BM25 over the whole corpus (docs/ + scale/):")
    longer = bm25_build(settings, quotes, documents, quote_texts)
    if parse:
        added = structure + max(longer, 0.0)
        print(
            f"  structure adds {added:.2f} s to an ingest of scale/ whose parse stage alone took {parse:.0f} s "
            f"(+{100 * added / parse:.2f}%; MiniLM's texts are unchanged, describe does not read structure)"
        )
    print(f"bench_long took {time.perf_counter() - begun:.0f}s")


if __name__ == "__main__":
    main()
