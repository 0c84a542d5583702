"""Retrieval recall over qa_dev.jsonl through the real CLI on the session's ingested corpus."""

from __future__ import annotations

import json

import pytest

from tests.conftest import IngestedWarehouse, run_cli, sql_rows


@pytest.fixture(scope="module")
def ablation(corpus_warehouse: IngestedWarehouse, corpus) -> dict:
    result = run_cli(
        corpus_warehouse.root, "eval", "--qa", str(corpus / "qa_dev.jsonl"), "--ablation", "--scope", "doc", "--json"
    )
    return json.loads(result.stdout)


def _recall(payload: dict, variant: str, group: str = "all") -> dict[int, float]:
    row = next(r for r in payload["results"] if r["variant"] == variant and r["scope"] == "doc")
    return {int(k): v for k, v in row["recall"][group].items()}


def test_doc_scoped_recall_meets_the_target_and_beats_the_naive_baseline(ablation: dict) -> None:
    full = _recall(ablation, "full")
    assert full[20] >= 0.92, full
    baseline = {5: 0.717, 10: 0.804, 20: 0.848}  # MinerU-flash + BM25 + MiniLM + RRF, issue 4
    assert all(full[k] > v for k, v in baseline.items()), full


def test_fusion_is_at_least_as_good_as_every_single_retriever(ablation: dict) -> None:
    # Measured without describe text: full 0.830/0.872/0.936/0.936 vs BM25 alone 0.830/0.894/0.915/0.936,
    # so fusion wins at @15, ties at @5/@20 and loses one item at @10: not "beats at every k".
    full = _recall(ablation, "full")
    singles = {
        r["variant"]: _recall(ablation, r["variant"]) for r in ablation["results"] if r["variant"].endswith(" alone")
    }
    assert len(singles) >= 2
    for name, single in singles.items():
        assert full[20] >= single[20], (name, single, full)
    # strictly better than each retriever at some budget
    assert all(any(full[k] > s[k] for k in full) for s in singles.values()), (singles, full)


def test_eval_writes_its_traces_to_the_warehouse(ablation: dict, corpus_warehouse: IngestedWarehouse) -> None:
    run_id = ablation["run_id"]
    rows = sql_rows(
        corpus_warehouse.root,
        f"SELECT (SELECT count(*) FROM hits WHERE run_id = '{run_id}') AS hits, "
        f"(SELECT count(DISTINCT question_id) FROM contexts WHERE run_id = '{run_id}' AND budget = 20) AS questions, "
        f"(SELECT max(n) FROM (SELECT count(*) AS n FROM contexts WHERE run_id = '{run_id}' AND budget = 20 "
        "GROUP BY question_id)) AS widest, "
        f"(SELECT count(*) FROM eval_results WHERE run_id = '{run_id}') AS results",
    )[0]
    assert rows["hits"] > 0 and rows["questions"] == 36 and rows["widest"] == 20 and rows["results"] > 0
