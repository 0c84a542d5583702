"""Fault: answers asked while an ingest runs: every answer from one consistent snapshot.

A warehouse holds snapshot A (a few short documents). An ingest adding documents runs while N
`interleaf ask --json` calls (corpus scope: what the new documents bring can change an answer) ask
the same questions, a few processes at a time, wave after wave over the ingest's duration. Each
answer must equal exactly the answer to its question at snapshot A (asked before the ingest, in a
copy) or at snapshot B (asked after it, in a copy without the stored answers, so that nothing asked
during the ingest is reused), and every document its context quotes must be in that snapshot.

cases = N; survived = the consistent answers; rows_lost = rows of snapshot A's views missing
after the ingest (an ingest that adds documents takes nothing away).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.faults.common import Cli, FaultContext, Outcome, contents, interleaf, rows_lost, spawn

SNAPSHOT_A = ["backus-1977-page.pdf", "layoutparser-table-page.pdf"]
ADDED = {  # the ingest's documents: at full size enough pages that 20 answers fit in its duration
    "ci": ["corrosion-plot-table.pdf", "scanned-table.pdf"],
    "full": [
        "corrosion-plot-table.pdf",
        "scanned-table.pdf",
        "scanned-table-multirow.pdf",
        "figures-example.pdf",
        "amt-handbook-page.pdf",
        "covid-report-ko.pdf",
    ],
}
QUESTIONS = [
    "Which inhibitor concentration of the egg-shell corrosion data gives the highest efficiency?",  # added docs
    "What did Backus call the von Neumann bottleneck?",  # snapshot A
]
CALLS = {"ci": 4, "full": 20}
WAVE = 2  # answer processes at once: 2 cores also run the ingest
BOUND_S = 600.0  # one command


@dataclass(frozen=True)
class Asked:
    question: str
    started_s: float  # after the ingest began
    ended_s: float
    returncode: int
    answer: dict | None  # `ask --json`'s output
    error: str = ""


@dataclass(frozen=True)
class Snapshot:
    documents: frozenset[str]  # file names
    answers: dict[str, dict]  # question -> `ask --json`'s output


def ask_args(question: str) -> list[str]:
    return ["ask", "--json", "--scope", "corpus", question]


def parse_answer(cli: Cli | tuple[int, str, str]) -> tuple[dict | None, str]:
    code, out, err = (cli.returncode, cli.stdout, cli.stderr) if isinstance(cli, Cli) else cli
    if code != 0:
        return None, f"exit {code}: {(out + err).strip()[-300:]}"
    try:
        return json.loads(out.strip().splitlines()[-1]), ""
    except (ValueError, IndexError) as exc:
        return None, f"not JSON ({exc}): {out[-200:]}"


def documents(warehouse: Path) -> frozenset[str]:
    return frozenset(name for (_doc_id, name, *_rest) in contents(warehouse, ("documents",))["documents"])


# what the answer flow writes: left out of a copy asked for a snapshot's answers, so they are computed
QUERY_TABLES = (
    "questions",
    "clauses",
    "asked_clauses",
    "hits",
    "contexts",
    "answers",
    "citations",
    "image_verdicts",
    "eval_results",
    "eval_evidence",
    "eval_metrics",
)


def snapshot(warehouse: Path, scratch: Path) -> Snapshot:
    """The documents `warehouse` shows and each question's answer there, asked in a copy that
    holds no stored answers (nothing an earlier call left is reused)."""
    copy = scratch / "warehouse"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(warehouse, copy, ignore=shutil.ignore_patterns("catalog.duckdb*", *QUERY_TABLES))
    answers = {}
    for question in QUESTIONS:
        answer, error = parse_answer(interleaf(copy, *ask_args(question), timeout=BOUND_S))
        if answer is None:
            raise RuntimeError(f"asking {question!r} at a snapshot failed: {error}")
        answers[question] = answer
    return Snapshot(documents(copy), answers)


def context_documents(answer: dict) -> set[str]:
    return {q["document"] for q in answer.get("context", [])} | {s["document"] for s in answer.get("sources", [])}


def judge(asked: Asked, a: Snapshot, b: Snapshot) -> str | None:
    """None when the answer is one snapshot's, with its context within that snapshot; else why not."""
    if asked.answer is None:
        return asked.error or "no answer"
    for name, snap in (("A", a), ("B", b)):
        if asked.answer == snap.answers[asked.question]:
            outside = context_documents(asked.answer) - snap.documents
            return f"equals snapshot {name}'s answer but quotes {sorted(outside)}" if outside else None
    return "equals neither snapshot's answer: " + ", ".join(sorted(context_documents(asked.answer)))


def ask_during(warehouse: Path, ingest: subprocess.Popen[str], expected_s: float, calls: int) -> list[Asked]:
    """`calls` answers in waves of WAVE processes, the waves' starts spread from the ingest's start
    to a little past its expected end (so that the last ones tend to meet snapshot B); once the
    ingest has ended the waves left start at once."""
    started = time.perf_counter()
    waves = -(-calls // WAVE)
    out: list[Asked] = []
    for n in range(waves):
        due = started + 1.2 * expected_s * n / max(waves - 1, 1)
        while time.perf_counter() < due and ingest.poll() is None:
            time.sleep(0.2)
        wave = [QUESTIONS[(len(out) + i) % len(QUESTIONS)] for i in range(min(WAVE, calls - len(out)))]
        begun = time.perf_counter() - started
        procs = [(q, spawn(warehouse, *ask_args(q))) for q in wave]
        for question, proc in procs:
            stdout, stderr = proc.communicate(timeout=BOUND_S)
            answer, error = parse_answer((proc.returncode, stdout, stderr))
            out.append(Asked(question, begun, time.perf_counter() - started, proc.returncode, answer, error))
    return out


def run(ctx: FaultContext) -> Outcome:
    return run_asked(ctx)[0]


def run_asked(ctx: FaultContext) -> tuple[Outcome, list[Asked], float]:
    """-> the outcome, every answer asked during the ingest, and the ingest's seconds."""
    docs = ctx.corpus / "docs"
    warehouse = ctx.scratch("warehouse") / "warehouse"
    first = interleaf(warehouse, "ingest", *[str(docs / name) for name in SNAPSHOT_A], timeout=BOUND_S)
    if first.returncode != 0:
        raise RuntimeError(f"ingesting snapshot A failed: {first.stdout[-500:]} {first.stderr[-1500:]}")
    a = snapshot(warehouse, ctx.scratch("snapshot-a"))
    views_a = contents(warehouse)

    started = time.perf_counter()
    ingest = spawn(warehouse, "ingest", *[str(docs / name) for name in ADDED[ctx.size]])
    # the added documents take about as long per document as snapshot A's did
    expected_s = first.seconds * len(ADDED[ctx.size]) / len(SNAPSHOT_A)
    asked = ask_during(warehouse, ingest, expected_s, CALLS[ctx.size])
    stdout, stderr = ingest.communicate(timeout=BOUND_S)
    ingest_s = time.perf_counter() - started
    if ingest.returncode != 0:
        raise RuntimeError(f"the ingest during the answers failed: {stdout[-500:]} {stderr[-1500:]}")
    b = snapshot(warehouse, ctx.scratch("snapshot-b"))
    if a.answers == b.answers:
        raise RuntimeError("the added documents change no answer: the check could not tell the snapshots apart")

    failures = []
    for i, one in enumerate(asked):
        why = judge(one, a, b)
        if why:
            failures.append(f"call {i} ({one.started_s:.0f}-{one.ended_s:.0f} s): {why}")
    lost = rows_lost(views_a, contents(warehouse))
    during = sum(one.started_s < ingest_s for one in asked)
    at_a = sum(one.answer == a.answers[one.question] for one in asked)
    detail = (
        f"{len(asked)} answers, {during} begun during the {ingest_s:.0f} s ingest; "
        f"{at_a} at snapshot A, {len(asked) - at_a - len(failures)} at B"
    )
    outcome = Outcome("answers during an ingest", len(asked), len(asked) - len(failures), lost, detail, failures)
    return outcome, asked, ingest_s
