"""Nothing a user stored disappears: every question set answered (question files, `ask`, the
server) stays in the views beside the others, `gc` keeps them, a set answered again shows once,
and answers leave only when the user says so (`gc --answers-before`)."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import IngestedWarehouse, run_cli, sql_rows
from tests.support.serve_server import copy_warehouse, serving
from warehouse import Warehouse
from warehouse.gc import find_garbage

FIRST_FILE = [
    {"id": "k1", "doc": "dpr-emnlp2020.pdf", "question": "What does Table 2 of the DPR paper compare?"},
    {"id": "k2", "doc": "dpr-emnlp2020.pdf", "question": "How many passages does the DPR paper split Wikipedia into?"},
]
SECOND_FILE = [
    {"id": "m1", "doc": "mavis-aaai2026.pdf", "question": "Which retrievers does the MAVIS paper compare?"},
    {"id": "m2", "doc": "cancer-guide.pdf", "question": "Who is the cancer guide written for?"},
]
ASKED = "Which datasets does the DPR paper evaluate on?"
SERVED = "What is the corrosion plot about?"
OURS = {r["question"] for r in FIRST_FILE + SECOND_FILE} | {ASKED, SERVED}


def _question_file(folder: Path, name: str, rows: list[dict]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _one_page(pdf: Path, folder: Path) -> Path:
    """The first page of `pdf` as a document of its own."""
    from interleaf.pdf.mupdf import pymupdf

    path = folder / f"{pdf.stem}-page-1.pdf"
    with pymupdf.open(pdf) as source, pymupdf.open() as page:
        page.insert_pdf(source, from_page=0, to_page=0)
        page.save(path)
    return path


def _answered(root: Path) -> dict[str, set[str]]:
    """qset_id -> the questions the `answers` view shows for it, through `interleaf sql`: the sets
    this module asks (the session's warehouse may hold other tests' answers: they stay too)."""
    rows = sql_rows(root, "SELECT qset_id, question, created_at FROM answers")
    assert all(r["created_at"] for r in rows), "every answer says when it was generated"
    sets: dict[str, set[str]] = {}
    for r in rows:
        sets.setdefault(r["qset_id"], set()).add(r["question"])
    return {qset: questions for qset, questions in sets.items() if questions & OURS}


def _garbage_of(root: Path, qsets: set[str]) -> list[Path]:
    """The parts `gc` would delete that belong to one of `qsets`."""
    return [p for p in find_garbage(Warehouse(root)).files if p.stem.split(".")[0] in qsets]


@pytest.fixture
def root(corpus_warehouse: IngestedWarehouse, tmp_path: Path) -> Path:
    return copy_warehouse(corpus_warehouse.root, tmp_path)


def test_every_question_set_stays_in_the_views_and_gc_keeps_it(root: Path, tmp_path: Path, corpus: Path) -> None:
    first = _question_file(tmp_path, "first.jsonl", FIRST_FILE)
    second = _question_file(tmp_path, "second.jsonl", SECOND_FILE)
    run_cli(root, "answer", "--qa", str(first))
    # the corpus grows between two question sets (scheduled ingestion): every later set is asked
    # under other fingerprints, and the first one's answers must stay
    run_cli(root, "ingest", str(_one_page(corpus / "scale" / "irs-manual-400p.pdf", tmp_path)))
    run_cli(root, "answer", "--qa", str(second))
    run_cli(root, "ask", ASKED, "--doc", "dpr-emnlp2020.pdf")
    with serving(root) as server:
        response = server.client(server.key).post("/v1/ask", json={"question": SERVED})
        assert response.status_code == 200, response.text

    wanted = {
        frozenset(r["question"] for r in FIRST_FILE),
        frozenset(r["question"] for r in SECOND_FILE),
        frozenset([ASKED]),
        frozenset([SERVED]),
    }
    shown = _answered(root)
    assert {frozenset(q) for q in shown.values()} == wanted, shown
    questions = [r for r in sql_rows(root, "SELECT DISTINCT qset_id, source FROM questions") if r["qset_id"] in shown]
    assert {r["qset_id"] for r in questions} == set(shown)
    assert {Path(r["source"]).name for r in questions} >= {"first.jsonl", "second.jsonl"}

    assert _garbage_of(root, set(shown)) == []
    dry = run_cli(root, "gc", "--dry-run").stdout
    assert dry.startswith("gc: would free"), dry
    run_cli(root, "gc")
    assert _answered(root) == shown
    for table in ("contexts", "citations", "hits"):
        kept = {r["qset_id"] for r in sql_rows(root, f"SELECT DISTINCT qset_id FROM {table}")}
        assert kept >= set(shown), table


def test_a_set_answered_again_shows_once_and_answers_leave_only_when_the_user_says_so(
    root: Path, tmp_path: Path
) -> None:
    first = _question_file(tmp_path, "first.jsonl", FIRST_FILE)
    second = _question_file(tmp_path, "second.jsonl", SECOND_FILE)
    run_cli(root, "answer", "--qa", str(second))
    run_cli(root, "answer", "--qa", str(first))
    before = _answered(root)
    run_cli(root, "answer", "--qa", str(first))  # the same fingerprints: the same parts, rewritten
    assert _answered(root) == before
    # another generator configuration: the set moves to its new fingerprint, the other set stays
    run_cli(root, "--set", "generate.offline.max_words=100", "answer", "--qa", str(first))
    after = _answered(root)
    assert after == before
    for table in ("questions", "answers"):  # one row per question: no copy from the earlier answering
        rows = sql_rows(
            root, f"SELECT qset_id, count(*) AS n, count(DISTINCT question_id) AS d FROM {table} GROUP BY 1"
        )
        rows = [r for r in rows if r["qset_id"] in after]
        assert len(rows) == 2 and all(r["n"] == r["d"] for r in rows), (table, rows)
    contexts = sql_rows(root, "SELECT count(*) AS n FROM (SELECT DISTINCT * FROM contexts)")[0]["n"]
    assert sql_rows(root, "SELECT count(*) AS n FROM contexts")[0]["n"] == contexts
    first_set = next(q for q, questions in after.items() if FIRST_FILE[0]["question"] in questions)
    superseded = _garbage_of(root, {first_set})
    assert {p.parent.parent.name for p in superseded} >= {"answers", "citations"}, superseded
    assert _garbage_of(root, set(after) - {first_set}) == []

    # pruning answers is the user's choice: the sets last answered before a date, and only those
    time.sleep(1.1)
    cut = datetime.now().isoformat(timespec="seconds")
    time.sleep(1.1)
    run_cli(root, "ask", ASKED, "--doc", "dpr-emnlp2020.pdf")
    sets = _answered(root)
    assert len(sets) == 3
    dry = run_cli(root, "gc", "--dry-run", "--answers-before", cut).stdout
    assert "would take" in dry and "question sets answered before" in dry, dry
    assert _answered(root) == sets  # a dry run takes nothing
    run_cli(root, "gc", "--answers-before", cut)
    assert {frozenset(q) for q in _answered(root).values()} == {frozenset([ASKED])}
    assert not list((root / "answers").glob(f"*/{first_set}.parquet")), "their parts are freed"

    refused = run_cli(root, "gc", "--answers-before", "last week", check=False)
    assert refused.returncode != 0 and "--answers-before 'last week'" in refused.stderr + refused.stdout
