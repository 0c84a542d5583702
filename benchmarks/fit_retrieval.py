"""Choose the fusion's numbers on dev question sets, cross-validated by document.

    python benchmarks/fit_retrieval.py --set WAREHOUSE=QUESTIONS.jsonl [--set ...] \
        [--grid retrieve.page_weight=0,0.25,0.5,1 --grid retrieve.rrf_k=5,10,20,60] [--joint] [--k 5] \
        [--measured docs/measured/retrieval-fit.md]

Each WAREHOUSE must hold the documents its QUESTIONS file asks about (ingested). Each option's
values are variants of the configured settings, the other options as configured (`--joint`: every
combination of the grids' values); each question is retrieved in
document scope under each (stored contexts are reused; a variant of an index setting, such as
`index.retrievers.bm25.b`, needs the documents ingested under it first: `interleaf --set KEY=VALUE
ingest PATH`, else it is refused) and counts as found at k when one of the
first k quotes of its largest context is on one of its evidence pages (MMLongBench-Doc's page
recall; the questions without evidence pages are left out). A variant's figure is the share found
over every set's questions together.

The choice is cross-validated by document (GroupKFold over the documents of all sets, shuffled
`--repeats` times): on each fold's training documents the variant with the highest page recall@k is
chosen and measured on the held-out documents. The held-out figure, beside the configured
settings' own, says whether choosing on these sets moves anything on documents the choice never
saw; the variant chosen on every document is printed last.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interleaf.config import load_settings  # noqa: E402
from interleaf.errors import InterleafError  # noqa: E402
from interleaf.evaluate.ablation import Variant  # noqa: E402
from interleaf.questions.stage import read_question_file  # noqa: E402


@dataclass(frozen=True)
class Question:
    key: str  # set:question_id
    document: str
    pages: frozenset[int]  # 0-based evidence pages


def _short(key: str) -> str:
    """How a variant names its option: `page_weight`, `rerank.blend`, `minilm.weight`."""
    return key.removeprefix("retrieve.").removeprefix("index.retrievers.")


def variants_of(grid: Sequence[str]) -> list[Variant]:
    """`KEY=V1,V2,...` per option -> one Variant per combination, named by its values."""
    axes = []
    for item in grid:
        key, _, values = item.partition("=")
        if not key or not values:
            raise SystemExit(f"--grid {item!r}: expected KEY=V1,V2,...")
        axes.append([(key, json.loads(v)) for v in values.split(",")])
    return [Variant(" ".join(f"{_short(k)}={v}" for k, v in combo), dict(combo)) for combo in itertools.product(*axes)]


def found_at(
    warehouse: Path, questions_path: Path, settings_path: str | None, variants: list[Variant], k: int, tag: str
) -> tuple[list[Question], dict[str, dict[str, bool]]]:
    """The set's questions with evidence pages, and per variant whether each is found at k."""
    from flows.query import run_queries

    settings = load_settings(settings_path)
    qset = read_question_file(questions_path)
    # retrieval only (no answer step): the contexts are stored under the same fingerprints as a full run's
    run = run_queries(warehouse, settings, qset, ["doc"], variants, use_prefect=False)
    questions = []
    for q in run.inputs(("questions",), variants[0].name, "doc")["questions"].to_pylist():
        pages = frozenset(int(e["page"]) - 1 for e in json.loads(q["evidence_json"] or "[]"))
        if pages:
            questions.append(Question(f"{tag}:{q['question_id']}", q["doc_name"] or "(corpus)", pages))
    found: dict[str, dict[str, bool]] = {}
    for v in variants:
        contexts = run.table("contexts", v.name, "doc").to_pylist()
        largest = max((r["budget"] for r in contexts), default=0)
        ranked: dict[str, list[tuple[int, int]]] = {}
        for r in contexts:
            if r["budget"] == largest:
                ranked.setdefault(f"{tag}:{r['question_id']}", []).append((r["position"], r["page_idx"]))
        found[v.name] = {q.key: any(p in q.pages for _, p in sorted(ranked.get(q.key, []))[:k]) for q in questions}
    print(f"{questions_path.name}: {len(questions)} questions with evidence pages over {warehouse}", flush=True)
    return questions, found


def held_out(
    questions: list[Question], found: dict[str, dict[str, bool]], folds: int, repeats: int
) -> tuple[float, list[str]]:
    """The held-out documents' page recall when each fold's variant is chosen on its training
    documents (mean over `repeats` shufflings of the documents into folds), and the choices."""
    from sklearn.model_selection import GroupKFold

    documents = sorted({q.document for q in questions})
    names = list(found)
    hits = np.array([[found[n][q.key] for n in names] for q in questions], dtype=float)
    figures, chosen = [], []
    for seed in range(repeats):
        order = dict(zip(documents, np.random.default_rng(seed).permutation(len(documents)), strict=True))
        groups = np.array([order[q.document] for q in questions])
        right = 0.0
        for train, test in GroupKFold(folds).split(hits, groups=groups):
            best = int(np.argmax(hits[train].mean(axis=0)))  # ties: the first in grid order
            chosen.append(names[best])
            right += hits[test, best].sum()
        figures.append(right / len(questions))
    return float(np.mean(figures)), chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], help="WAREHOUSE=QUESTIONS.jsonl (repeatable)")
    parser.add_argument(
        "--grid",
        action="append",
        default=[],
        help="KEY=V1,V2,... (repeatable; JSON values; a list's item by name: index.retrievers.minilm.weight); "
        "default: page_weight, rrf_k, the rerank blend, the dense retriever's weight, the keywords clause's weight, "
        "the pages' turns",
    )
    parser.add_argument("--joint", action="store_true", help="every combination of the grids, chosen together")
    parser.add_argument("--config", default=None, help="the settings the variants change")
    parser.add_argument("--k", type=int, default=5, help="page recall at this many quotes")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--measured", default=None, help="also write the table, with the command and commit, here")
    args = parser.parse_args()
    if not args.set:
        parser.error("give at least one --set WAREHOUSE=QUESTIONS.jsonl")
    grid = args.grid or [
        "retrieve.page_weight=0,0.25,0.5,1",
        "retrieve.rrf_k=5,10,20,60",
        "retrieve.rerank.blend=0.25,0.5,0.75",
        "index.retrievers.minilm.weight=0.25,0.5,0.75,1",
        "expand.weights.keywords=0,0.25,0.5,1",
        "retrieve.pages_take_turns=0,10,20",
        "retrieve.number_weight=0,0.5,1,1.5,2",
    ]
    # one option at a time, the others as configured (each number's choice stands on its own), or jointly
    choices = [variants_of(grid)] if args.joint else [variants_of([axis]) for axis in grid]
    variants = [Variant("configured"), *(v for c in choices for v in c)]
    questions: list[Question] = []
    found: dict[str, dict[str, bool]] = {v.name: {} for v in variants}
    for i, item in enumerate(args.set):
        warehouse, _, path = item.partition("=")
        tag = f"{i}:{Path(warehouse).name}/{Path(path).stem}"
        qs, f = found_at(Path(warehouse), Path(path), args.config, variants, args.k, tag)
        questions += qs
        for name, by_question in f.items():
            found[name] |= by_question
    documents = len({q.document for q in questions})
    lines = [f"page recall@{args.k} over {len(questions)} questions in {documents} documents"]
    sets = sorted({q.key.rpartition(":")[0] for q in questions})

    def per_set(name: str) -> str:
        """Each set's own figure: a set whose questions are few can move little in the total."""
        figures = []
        for tag in sets:
            keys = [q.key for q in questions if q.key.rpartition(":")[0] == tag]
            figures.append(f"{tag.partition(':')[2]} {sum(found[name][k] for k in keys) / len(keys):.3f}")
        return f"  ({', '.join(figures)})" if len(sets) > 1 else ""

    configured = sum(found["configured"].values()) / len(questions)
    lines.append(f"  {configured:.3f}  the configured settings{per_set('configured')}")
    for choice in choices:
        lines += [f"  {sum(found[v.name].values()) / len(questions):.3f}  {v.name}{per_set(v.name)}" for v in choice]
        among = {v.name: found[v.name] for v in choice}
        figure, chosen = held_out(questions, among, args.folds, args.repeats)
        top = max(sum(found_by.values()) for found_by in among.values())
        tied = [n for n in among if sum(among[n].values()) == top]  # ties: the first in grid order chosen
        best = tied[0]
        lines.append(
            f"  chosen on training documents, measured on held-out ones ({args.folds} folds x {args.repeats}): "
            f"{figure:.3f}; chosen on every document: {best} (in {chosen.count(best)} of {len(chosen)} folds)"
            + (f", tied with {', '.join(tied[1:])}" if len(tied) > 1 else "")
        )
    print("\n".join(lines))
    if args.measured:
        from interleaf.measured import write_measured

        title = f"Retrieval settings chosen on dev sets (page recall@{args.k})"
        write_measured(Path(args.measured), title, "\n".join(lines), sys.argv, "python benchmarks/fit_retrieval.py")


if __name__ == "__main__":
    try:
        main()
    except InterleafError as error:  # a refusal (a variant the warehouse holds no index for): its message only
        sys.exit(f"fit_retrieval: {error}")
