"""Fit the offline composer's ranker (interleaf/generate/answer_ranker.py) on dev question sets.

    python benchmarks/fit_answer_ranker.py \
        --set WAREHOUSE=QUESTIONS.jsonl [--set ...] [--out interleaf/generate/fitted/answer_ranker.json]

Each WAREHOUSE must hold the documents its QUESTIONS file asks about (ingested); the questions are
retrieved in document scope (stored contexts are reused) and every candidate of each context
becomes one example: its feature row (answer_features.FEATURES) and whether it holds the gold
answer (`must_include`, folded as answer_correct folds; half of a list's items or more) on one of
the question's evidence pages (where the file gives them). The
ranker is scikit-learn's LogisticRegression on standardised features (the library's default
regularisation, C=1); the abstention threshold is the one that maximises the share of questions
handled right on the fitting questions (an answerable one: its best candidate holds the answer and
reaches the threshold; an unanswerable one: its best candidate does not reach it) among those that
refuse at most `--max-false-abstention` of the answerable ones. A question the composer refuses
whatever the threshold (no candidate of the kind its first part asks for) counts there as refused.

Before the final fit it cross-validates by document (GroupKFold: no document's candidates on both
sides; the documents shuffled into folds `--repeats` times, the figures averaged) and prints the
held-out folds' figures; they, with the sets and counts, go into the file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interleaf.config import load_settings  # noqa: E402
from interleaf.evaluate.ablation import Variant  # noqa: E402
from interleaf.evaluate.metrics.correctness import fold, holds_whole  # noqa: E402
from interleaf.generate.abbreviations import defined_abbreviations  # noqa: E402
from interleaf.generate.answer_features import FEATURES  # noqa: E402
from interleaf.generate.answer_ranker import FITTED  # noqa: E402
from interleaf.generate.offline import can_answer, most_relevant_first, rank_part, request_units  # noqa: E402
from interleaf.generate.offline_units import image_labels  # noqa: E402
from interleaf.generate.relevance import Relevance  # noqa: E402
from interleaf.generate.stage import build_requests  # noqa: E402
from interleaf.measured import current_commit  # noqa: E402
from interleaf.questions.stage import read_question_file  # noqa: E402


@dataclass
class Examples:
    """Every candidate of every question: features, label, and the question and document it is of."""

    x: list[np.ndarray]
    y: list[np.ndarray]
    question: list[str]
    document: list[str]
    answerable: dict[str, bool]
    text: list[str] = field(default_factory=list)  # each candidate's text: for reading the examples
    # questions the composer refuses whatever the threshold (no candidate it may write), and their
    # documents: they count in the figures the threshold is chosen on, as the product refuses them
    refused: dict[str, str] = field(default_factory=dict)


def holds(text: str, gold: list[str]) -> bool:
    """Half of the gold items or more in the text, each whole as answer_correct finds it ("12" is not
    in "2012")."""
    folded = fold(text)
    found = sum(holds_whole(folded, g) for g in gold)
    return bool(gold) and found * 2 >= len(gold)


def collect(warehouse: Path, questions_path: Path, settings_path: str | None, into: Examples, tag: str) -> None:
    from flows.query import run_queries

    settings = load_settings(settings_path)
    qset = read_question_file(questions_path)
    # retrieval only (no answer step): the contexts are stored under the same fingerprints as a full run's
    run = run_queries(warehouse, settings, qset, ["doc"], [Variant("fit")], use_prefect=False)
    given = run.inputs(("questions", "clauses", "quotes", "quote_texts", "documents"), "fit", "doc")
    contexts = run.table("contexts", "fit", "doc")
    tables = [given["questions"], contexts, given["clauses"], given["quotes"], given["quote_texts"]]
    requests = build_requests(*tables, given["documents"], settings.generate, doc_scope=True)
    gold = {r["question_id"]: r for r in given["questions"].to_pylist()}
    for request in map(most_relevant_first, requests):  # as the composer reads them (offline.py)
        q = gold[request.question_id]
        qid = f"{tag}:{request.question_id}"
        into.answerable[qid] = q["answerable"] is not False
        # a question file without `must_include` (qa_dev.jsonl) has its evidence's needles: what the
        # answering region prints
        needles = [e["needle"] for e in json.loads(q["evidence_json"] or "[]") if e.get("needle")]
        must = list(q["must_include"] or needles) if q["answerable"] is not False else []
        pages = {int(e["page"]) - 1 for e in json.loads(q["evidence_json"] or "[]")}
        relevance = Relevance(request.question, request.quotes, request.documents_text)
        units = request_units(request)
        document = q["doc_name"] or "(corpus)"
        if not units or not relevance.parts:
            into.refused[qid] = document
            continue
        labels = image_labels(request.quotes)
        defined = defined_abbreviations(q.text for q in request.quotes)
        for part in relevance.parts[:1]:  # the question's first part: where its answer is sought first
            c = rank_part(request, part, units, labels, relevance, defined)
            keep = np.array([can_answer(part, u) for u in c.units])  # what the composer may choose
            if not keep.any():
                into.refused[qid] = document
                continue
            into.x.append(c.matrix[keep])
            kept = [u for u, k in zip(c.units, keep, strict=True) if k]
            # the gold value on an evidence page: a small number ("5") is printed on many pages
            into.y.append(np.array([holds(u.text, must) and (not pages or u.quote.page_idx in pages) for u in kept]))
            into.question += [qid] * int(keep.sum())
            into.text += [u.text for u, k in zip(c.units, keep, strict=True) if k]
            into.document += [document] * int(keep.sum())  # one group per document, whatever set
    print(f"{questions_path.name}: {len(requests)} questions over {warehouse}", flush=True)


def question_outcomes(p: np.ndarray, y: np.ndarray, questions: np.ndarray) -> dict[str, tuple[float, bool]]:
    """Per question: the best candidate's probability and whether it holds the answer."""
    out: dict[str, tuple[float, bool]] = {}
    for i in np.argsort(-p, kind="stable"):
        out.setdefault(questions[i], (float(p[i]), bool(y[i])))
    return out


def figures(outcomes: dict[str, tuple[float, bool]], answerable: dict[str, bool], threshold: float) -> dict:
    ans = [q for q in outcomes if answerable[q]]
    una = [q for q in outcomes if not answerable[q]]
    right = [q for q in ans if outcomes[q][0] >= threshold and outcomes[q][1]]
    refused = [q for q in ans if outcomes[q][0] < threshold]
    abstained = [q for q in una if outcomes[q][0] < threshold]
    handled = len(right) + len(abstained)
    return {
        "questions": len(outcomes),
        "best_holds_answer": round(len(right) / max(len(ans), 1), 3),
        "top1_holds_answer_any_threshold": round(sum(outcomes[q][1] for q in ans) / max(len(ans), 1), 3),
        "false_abstention": round(len(refused) / max(len(ans), 1), 3),
        "abstention_on_unanswerable": round(len(abstained) / max(len(una), 1), 3),
        "handled_right": round(handled / max(len(outcomes), 1), 3),
    }


def best_threshold(
    outcomes: dict[str, tuple[float, bool]], answerable: dict[str, bool], max_false_abstention: float
) -> float:
    """The threshold that handles the most questions right among those that refuse at most
    `max_false_abstention` of the answerable questions of each set (the bound is each dev set's, not
    their pool's: a set of easy questions does not buy refusals on another); ties: the lowest,
    abstaining least."""
    grid = sorted({p for p, _ in outcomes.values() if p >= 0} | {0.0})
    sets: dict[str, dict[str, tuple[float, bool]]] = {}
    for q, outcome in outcomes.items():
        sets.setdefault(question_set(q), {})[q] = outcome
    scores = []
    for t in grid:
        if all(figures(of_set, answerable, t)["false_abstention"] <= max_false_abstention for of_set in sets.values()):
            scores.append((figures(outcomes, answerable, t)["handled_right"], -t))
    return -max(scores, default=(0.0, -0.0))[1]


def question_set(question: str) -> str:
    """The set a question id (`SET:ID`, as `collect` tags it) is of."""
    return question.partition(":")[0]


def ceiling(y: np.ndarray, questions: np.ndarray, answerable: dict[str, bool]) -> dict[str, dict[str, float]]:
    """Per set, the share of its answerable questions of which some candidate holds the answer: the
    most that any ranker of these candidates, at any threshold, gets right. What lies above it needs
    other candidates (a value worked out, a chart read), not another fit."""
    held = {q: False for q, ok in answerable.items() if ok}
    for q in questions[y > 0]:
        held[q] = True
    out: dict[str, dict[str, float]] = {}
    for name in sorted({question_set(q) for q in held}):
        of_set = [v for q, v in held.items() if question_set(q) == name]
        out[name] = {"answerable": len(of_set), "some_candidate_holds_it": round(sum(of_set) / len(of_set), 3)}
    return out


def fit(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(x, y)


def cross_validate(
    x: np.ndarray,
    y: np.ndarray,
    questions: np.ndarray,
    documents: np.ndarray,
    ex: Examples,
    args: argparse.Namespace,
    gated: set[str],
) -> tuple[dict, list[float]]:
    """The held-out folds' figures (GroupKFold by document), each fold's threshold fitted on its
    training folds, averaged over `args.repeats` shufflings of the documents into folds (one split's
    figure moves by a few questions with the documents that happen to share a fold); `gated`
    questions are refused whatever the threshold, as `ex.refused` are."""
    from sklearn.model_selection import GroupKFold

    refused_at = dict(ex.refused) | {q: documents[questions == q][0] for q in gated}
    refused = {q: (-1.0, False) for q in refused_at}  # below any threshold
    runs, thresholds = [], []
    for repeat in range(args.repeats):
        held_out: dict[str, tuple[float, bool]] = dict(refused)
        folds = GroupKFold(n_splits=args.folds, shuffle=True, random_state=repeat)
        for train, test in folds.split(x, y, documents):
            model = fit(x[train], y[train])
            inside = question_outcomes(model.predict_proba(x[train])[:, 1], y[train], questions[train])
            trained_on = set(documents[train])
            inside |= {q: refused[q] for q, document in refused_at.items() if document in trained_on}
            threshold = best_threshold(inside, ex.answerable, args.max_false_abstention)
            thresholds.append(threshold)
            outside = question_outcomes(model.predict_proba(x[test])[:, 1], y[test], questions[test])
            held_out |= {q: (p if p >= threshold else -1.0, ok) for q, (p, ok) in outside.items() if q not in gated}
        runs.append(figures(held_out, ex.answerable, 0.0))  # each fold's own threshold applied (-1: below it)
    mean = {k: round(float(np.mean([r[k] for r in runs])), 3) for k in runs[0]}
    return mean | {"questions": runs[0]["questions"], "repeats": args.repeats}, thresholds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], help="WAREHOUSE=QUESTIONS.jsonl (repeatable)")
    parser.add_argument(
        "--examples", action="append", default=[], help="an .npz --cache wrote: its examples join the fit (repeatable)"
    )
    parser.add_argument("--config", default=None, help="the settings the contexts are retrieved with")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="shufflings of the documents into folds, averaged")
    # A refusal hides an answer the documents hold: the issue that asked for this ranker bounds it at
    # 10% of the answerable questions; the threshold handles the most questions right within it.
    parser.add_argument("--max-false-abstention", type=float, default=0.10)
    parser.add_argument("--out", default=str(FITTED))
    parser.add_argument("--cache", default=None, help="an .npz of the examples: written once, then reused")
    args = parser.parse_args()

    ex = Examples([], [], [], [], {})
    cache = Path(args.cache) if args.cache else None
    loaded = [np.load(f, allow_pickle=True) for f in args.examples]
    if cache and cache.exists():
        loaded.append(np.load(cache, allow_pickle=True))
    if loaded:
        x, y = np.vstack([d["x"] for d in loaded]), np.concatenate([d["y"] for d in loaded])
        questions = np.concatenate([d["question"] for d in loaded])
        documents = np.concatenate([d["document"] for d in loaded])
        for d in loaded:
            ex.answerable |= json.loads(str(d["answerable"]))
            ex.refused |= json.loads(str(d["refused"])) if "refused" in d else {}
        args.set = (
            [s for d in loaded for s in json.loads(str(d["sets"]))] if all("sets" in d for d in loaded) else args.set
        )
    else:
        if not args.set:
            parser.error("give --set WAREHOUSE=QUESTIONS (or --examples FILE)")
        for item in args.set:
            warehouse, sep, questions_file = item.partition("=")
            if not sep:
                parser.error(f"--set {item!r} is not WAREHOUSE=QUESTIONS")
            path = Path(questions_file)  # the tag names the set: "mmlongbench-dev/qa_dev"
            collect(Path(warehouse), path, args.config, ex, f"{path.parent.name}/{path.stem}")
        x, y = np.vstack(ex.x), np.concatenate(ex.y)
        questions, documents = np.array(ex.question), np.array(ex.document)
        if cache:
            np.savez(
                cache,
                x=x,
                y=y,
                question=questions,
                document=documents,
                answerable=json.dumps(ex.answerable),
                refused=json.dumps(ex.refused),
                text=np.array(ex.text),
                sets=json.dumps(args.set),
            )
    # a question none of whose candidates were kept (an empty context) is answered by abstention
    print(
        f"{len(x)} candidates of {len(set(questions))} questions in {len(set(documents))} documents; {y.sum()} hold it"
    )

    reachable = ceiling(y, questions, ex.answerable)
    print("answerable questions some candidate answers (the ranker's ceiling):", json.dumps(reachable))

    # the gate: a question whose first part names something its document never prints refused
    # before any candidate is ranked (offline.py); kept when the held-out folds handle more right with it
    never = x[:, FEATURES.index("anchor_never_printed")] > 0
    unprinted = set(questions[never])
    print(f"{len(unprinted)} questions name something their document never prints")
    runs = {
        gate: cross_validate(x, y, questions, documents, ex, args, unprinted if gate else set())
        for gate in (False, True)
    }
    for gate, (cv, _) in runs.items():
        print(f"held-out folds (by document), gate {'on' if gate else 'off'}:", json.dumps(cv))
    gate = runs[True][0]["handled_right"] > runs[False][0]["handled_right"]
    cv, thresholds = runs[gate]

    model = fit(x, y)
    refused = {q: (-1.0, False) for q in [*ex.refused, *(unprinted if gate else ())]}  # below any threshold
    outcomes = question_outcomes(model.predict_proba(x)[:, 1], y, questions) | refused
    threshold = best_threshold(outcomes, ex.answerable, args.max_false_abstention)
    print("fitting questions:", json.dumps(figures(outcomes, ex.answerable, threshold)), "threshold", threshold)
    scaler, lr = model[0], model[1]
    payload = {
        "features": list(FEATURES),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "coef": lr.coef_[0].tolist(),
        "intercept": float(lr.intercept_[0]),
        "threshold": threshold,
        "threshold_rule": f"most questions handled right with false abstention <= {args.max_false_abstention}",
        "refuse_never_printed": gate,
        "fitted_on": [Path(s.partition("=")[2]).as_posix().split("/shared/")[-1] for s in args.set],
        "examples": {
            "candidates": len(x),
            "questions": len(set(questions)),
            "documents": len(set(documents)),
            "refused_whatever_the_threshold": len(ex.refused),
            "ceiling": reachable,
        },
        "cross_validation": {
            "folds": args.folds,
            "repeats": args.repeats,
            "by": "document",
            "held_out": cv,
            "held_out_other_gate": runs[not gate][0],
            "fold_thresholds": thresholds,
        },
        "fitted_at": datetime.date.today().isoformat(),
        "commit": current_commit(),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    os.replace(tmp, out)
    print(f"written {out}")
    for name, c in sorted(zip(FEATURES, lr.coef_[0], strict=True), key=lambda t: -abs(t[1])):
        print(f"  {name:24s} {c:+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
