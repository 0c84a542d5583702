"""`interleaf eval --mmlongbench` on a two-document slice of MMLongBench-Doc's dev half, in the
benchmark's own format: every question of 2303.05039v2.pdf and 7c3f6204…pdf (all five answer formats),
ingested from ../shared, asked in document scope, scored; the figures it stores are those the
benchmark's released scorer gives the stored short answers."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from interleaf.cli.output import stored_metric_rows
from interleaf.evaluate.metric_rows import measured_by, write_rows
from tests.conftest import CORPUS, run_cli, sql_rows

BENCH = CORPUS.parent / "benchmarks" / "mmlongbench-dev"
DOCS = ("2303.05039v2.pdf", "7c3f6204b3241f142f0f8eb8e1fefe7a.pdf")

pytestmark = pytest.mark.skipif(not (BENCH / "samples.json").exists(), reason=f"{BENCH} is not here")


def _released_scorer():  # the benchmark's own module, read from ../shared
    spec = importlib.util.spec_from_file_location("mmlb_eval_score", BENCH / "eval_score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], dict]:
    folder = tmp_path_factory.mktemp("mmlb")
    samples = [s for s in json.loads((BENCH / "samples.json").read_text()) if s["doc_id"] in DOCS]
    (folder / "samples.json").write_text(json.dumps(samples))
    pdfs = folder / "pdfs"
    pdfs.mkdir()
    for name in DOCS:  # the benchmark's files where they are: linked, not copied
        (pdfs / name).symlink_to(BENCH / "pdfs" / name)
    root = folder / "warehouse"
    args = ("eval", "--mmlongbench", str(folder / "samples.json"), "--documents", str(pdfs), "--json")
    payload = json.loads(run_cli(root, *args).stdout.strip().splitlines()[-1])
    return root, samples, payload


def test_every_answer_format_is_asked_and_scored(evaluated: tuple[Path, list[dict], dict]) -> None:
    root, samples, payload = evaluated
    assert {s["answer_format"] for s in samples} == {"Int", "Float", "Str", "List", "None"}
    metrics = {(m["metric"], m["breakdown"], m["group_name"]): m for m in payload["metrics"]}
    by_format = {
        g: m["n"] for (metric, b, g), m in metrics.items() if metric == "mmlb_accuracy" and b == "answer_format"
    }
    expected = {f: sum(s["answer_format"] == f for s in samples) for f in by_format}
    assert by_format == expected and set(by_format) == {"Int", "Float", "Str", "List", "None"}
    assert metrics[("mmlb_accuracy", "all", "all")]["n"] == len(samples)
    # every question has its short answer stored, the unanswerable gold's format included
    stored = sql_rows(root, "select question_id, short_answer, answerable from answers where short_answer is not null")
    assert len(stored) == len(samples)
    assert all(r["short_answer"] == "Not answerable" for r in stored if not r["answerable"])


def test_the_stored_figures_are_the_released_scorers(evaluated: tuple[Path, list[dict], dict]) -> None:
    root, _, payload = evaluated
    released = _released_scorer()
    rows = sql_rows(
        root,
        "select q.question_id, q.answer, q.answer_format, a.short_answer from answers a join questions q "
        "on q.qset_id = a.qset_id and q.question_id = a.question_id order by q.question_id",
    )
    with contextlib.redirect_stdout(io.StringIO()):  # the released scorer prints as it scores lists
        scores = [released.eval_score(r["answer"], r["short_answer"], r["answer_format"]) for r in rows]
    metrics = {(m["metric"], m["breakdown"], m["group_name"]): m["value"] for m in payload["metrics"]}
    assert metrics[("mmlb_accuracy", "all", "all")] == pytest.approx(sum(scores) / len(scores))
    # page recall: a share, never falling as k grows
    recall = [metrics[(f"page_recall@{k}", "all", "all")] for k in (1, 5, 10, 20)]
    assert all(0.0 <= r <= 1.0 for r in recall) and recall == sorted(recall)
    assert recall[-1] > 0  # some evidence page is retrieved for these two documents


def test_a_run_compares_with_itself_and_a_run_measured_by_other_code_is_named(
    evaluated: tuple[Path, list[dict], dict], tmp_path: Path
) -> None:
    root, _, payload = evaluated
    run = payload["run_id"]
    same = run_cli(root, "eval", "--compare", run, run)
    assert "mmlb_accuracy" in same.stdout and "measured by different code" not in same.stdout, same.stdout
    # every stored value keeps the digest of the code that measured it
    stored = sql_rows(root, f"select distinct measured_by from eval_metrics where run_id = '{run}'")
    assert stored == [{"measured_by": measured_by()}]
    assert f"Measured by code {measured_by()}" in Path(payload["report"]).read_text()
    # the same values as an older commit's report file would hold them, measured by other code: the
    # comparison says so, and the gate still passes equal values
    older = [replace(r, measured_by="0123456789abcdef") for r in stored_metric_rows(root, run)]
    report = write_rows(older, tmp_path / "eval_metrics.jsonl")
    apart = run_cli(root, "eval", "--compare", str(report), run)
    assert "measured by different code" in apart.stdout and "0123456789abcdef" in apart.stdout, apart.stdout
    assert apart.returncode == 0 and "gate: PASS" in apart.stdout
