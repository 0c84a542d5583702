"""`eval --mmdocrag` as stages of the one contract, run by `run_unit` (ledger rows, rejects, the
cache), and the one reader of stored answers: verdicts come back as stored, not checked again.
On the MMDocRAG-format fixture (tests/fixtures/mmdocrag) with the offline generator."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.mmdocrag import mmdocrag_plan, run_mmdocrag
from interleaf.config import load_settings
from interleaf.evaluate.mmdocrag import read_mmdocrag
from interleaf.stage import SOURCE_ROOT
from interleaf.stored_answers import stored_answers
from pipeline.stage_task import Plan
from warehouse import Warehouse
from warehouse.catalog import query

FIXTURE = Path(__file__).parent / "fixtures" / "mmdocrag" / "sample_15.jsonl"


@pytest.fixture
def file_with_a_bad_line(tmp_path: Path) -> Path:
    path = tmp_path / "dev_3.jsonl"
    path.write_text(FIXTURE.read_text() + '{"q_id": 9, "question": "no quotes"\n')
    return path


def test_runs_as_two_stages_with_ledger_rows_rejects_and_the_cache(file_with_a_bad_line: Path, tmp_path: Path) -> None:
    root = tmp_path / "wh"
    settings = load_settings()
    first = run_mmdocrag(root, settings, str(file_with_a_bad_line), None, "text")
    assert [(r.stage, r.status) for r in first.results] == [("mmdocrag_generate", "ok"), ("mmdocrag_evaluate", "ok")]
    assert first.qset_id.startswith("mmdocrag-dev_3-") and not first.cached
    assert {r["metric"] for r in first.rows} >= {"quote_f1", "quote_f1_mmdocrag", "citations_parsed_alike"}
    wh = Warehouse(root)
    _, ledger = query(wh, f"SELECT stage, status FROM runs WHERE run_id = '{first.run_id}'")
    assert sorted(ledger) == [("mmdocrag_evaluate", "ok"), ("mmdocrag_generate", "ok")]
    _, rejects = query(wh, "SELECT stage, reason FROM rejects")
    assert [(stage, reason.split(" at column")[0]) for stage, reason in rejects] == [
        ("mmdocrag_generate", f"{file_with_a_bad_line}:4: invalid JSON: Expecting ',' delimiter")
    ]
    _, answers = query(wh, "SELECT count(*), min(scope) FROM answers")
    assert answers == [(3, "fixed")]  # stored like every answer, in MMDocRAG's fixed-context scope

    again = run_mmdocrag(root, settings, str(file_with_a_bad_line), None, "text")
    assert again.cached and [r.status for r in again.results] == ["cached", "cached"]
    assert again.rows == first.rows  # the stored scores, under the run that computed them


def test_the_reader_returns_the_stored_verdicts_not_a_new_check(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    settings = load_settings()
    done = run_mmdocrag(root, settings, str(FIXTURE), None, "text")
    wh, fingerprint, unit = Warehouse(root), done.fingerprints["mmdocrag_generate"], done.qset_id
    answers, citations = wh.read_part("answers", fingerprint, unit), wh.read_part("citations", fingerprint, unit)
    contexts = {i.question_id: i.request("text").quotes for i in read_mmdocrag(FIXTURE).items}
    read = stored_answers(answers, citations, contexts)
    rows = citations.to_pylist()
    assert [c.supported for a in read for s in a.checked.sentences for c in s.citations] == [
        r["supported"] for r in rows
    ]
    assert sum(len(s.citations) for a in read for s in a.checked.sentences) == len(rows) > 0
    # a verdict stored differently from what the checker would say now comes back as stored
    rows[0] = rows[0] | {"supported": not rows[0]["supported"], "reason": "as stored"}
    flipped = citations.from_pylist(rows, schema=citations.schema)
    again = stored_answers(answers, flipped, contexts)
    first = next(c for a in again for s in a.checked.sentences for c in s.citations)
    assert (first.supported, first.reason) == (rows[0]["supported"], "as stored")
    with pytest.raises(KeyError, match="has no context"):
        stored_answers(answers, citations, {})


@pytest.mark.parametrize(
    ("edited", "expected"),
    [
        ("interleaf/evaluate/mmdocrag.py", ["mmdocrag_generate", "mmdocrag_evaluate"]),  # the reader of the file
        ("interleaf/generate/citations.py", ["mmdocrag_generate", "mmdocrag_evaluate"]),  # the checker it runs
        ("interleaf/stored_answers.py", ["mmdocrag_evaluate"]),
        ("interleaf/evaluate/metrics/citation_sets.py", ["mmdocrag_evaluate"]),
    ],
)
def test_the_fingerprints_cover_every_module_the_stages_run(tmp_path: Path, edited: str, expected: list[str]) -> None:
    shutil.copytree(SOURCE_ROOT / "interleaf", tmp_path / "interleaf", ignore=shutil.ignore_patterns("__pycache__"))
    stages = mmdocrag_plan(load_settings(), "text").stages
    before = Plan.of(stages, root=tmp_path).fingerprints
    path = tmp_path / edited
    path.write_text(path.read_text() + "\n# an edit\n")
    after = Plan.of(stages, root=tmp_path).fingerprints
    assert [s for s in before if before[s] != after[s]] == expected
