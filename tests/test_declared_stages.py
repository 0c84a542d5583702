"""Flows built from what stages declare: a toy ingest stage added as the README says (a package,
its table's schema, one line of the stage list) runs in the ingest and its table is a view; a toy
retriever kind added as one file and one registry line is indexed and searched. Both in a copy of
the tree (tests/support/declared.py); the toy stage on Ray is in tests/test_ray_engine.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.plan_order import PlanError, levels, ordered
from tests.conftest import run_cli
from tests.support.declared import add_kind_count_stage, add_word_count_retriever, source_copy

DOC = "corrosion-plot-table.pdf"


def _sql(root: Path, code: Path, query: str) -> list[dict]:
    return json.loads(run_cli(root, "sql", "--json", query, code=code).stdout)


def kind_counts_match_quotes(root: Path, code: Path) -> list[dict]:
    """The toy stage's rows, checked against the quotes view they count."""
    counted = _sql(root, code, "select doc_id, kind, quotes from kind_counts order by all")
    expected = _sql(root, code, "select doc_id, kind, count(*) as quotes from quotes group by all order by all")
    assert counted, "the toy stage's table is empty in the views"
    assert counted == expected
    return counted


@pytest.mark.slow
def test_a_toy_ingest_stage_added_in_one_package_runs_and_its_table_is_a_view(tmp_path: Path, corpus: Path) -> None:
    code = source_copy(tmp_path / "code")
    add_kind_count_stage(code)
    root = tmp_path / "warehouse"
    run = run_cli(root, "ingest", str(corpus / "docs" / DOC), code=code)
    assert "kind_count: 1 ran" in run.stdout, run.stdout + run.stderr
    kind_counts_match_quotes(root, code)
    (ledger,) = _sql(root, code, "select count(*) as n from runs where stage = 'kind_count' and status = 'ok'")
    assert ledger["n"] == 1
    # the unchanged tree is not touched: its own ingest has no such stage
    plain = run_cli(tmp_path / "plain", "ingest", str(corpus / "docs" / DOC))
    assert "kind_count" not in plain.stdout


@pytest.mark.slow
def test_a_toy_retriever_kind_in_one_file_is_indexed_and_searched(tmp_path: Path, corpus: Path) -> None:
    code = source_copy(tmp_path / "code")
    add_word_count_retriever(code)
    root = tmp_path / "warehouse"
    only_toy = ("--set", "index.retrievers=[{name: words, kind: word_count}]")
    run_cli(root, *only_toy, "ingest", str(corpus / "docs" / DOC), code=code)
    (indexed,) = _sql(root, code, "select count(*) as n from index_texts where retriever = 'words'")
    (quotes,) = _sql(root, code, "select count(*) as n from quotes where not furniture")
    assert indexed["n"] == quotes["n"] > 0
    # the question asks in the words of the quote with the most of them: the toy retriever ranks it first
    texts = _sql(root, code, "select quote_id, text from index_texts where retriever = 'words'")
    best = max(texts, key=lambda r: len(set(r["text"].lower().split())))
    question = " ".join(best["text"].split()[:12])
    answer = run_cli(root, *only_toy, "ask", question, "--doc", DOC, "--json", code=code)
    assert json.loads(answer.stdout)["answer"], answer.stdout
    hits = _sql(root, code, "select quote_id, rank from hits where retriever = 'words' and clause_id = 0 order by rank")
    assert hits and hits[0]["quote_id"] in {r["quote_id"] for r in texts}
    top = {r["quote_id"] for r in hits[:3]}
    assert best["quote_id"] in top, (best, hits[:3])
    # the unchanged tree refuses the kind, naming the ones it has
    refused = run_cli(tmp_path / "plain", *only_toy, "ingest", str(corpus / "docs" / DOC), check=False)
    assert refused.returncode == 2 and "word_count" in refused.stderr, refused.stderr


class _Declared:
    def __init__(self, name: str, inputs: tuple[str, ...], outputs: tuple[str, ...], upstream: tuple[str, ...] = ()):
        self.name, self.inputs, self.outputs, self.upstream = name, inputs, outputs, upstream


def test_the_order_comes_from_the_declarations_and_a_bad_plan_names_its_stage() -> None:
    a, b = _Declared("a", (), ("t",)), _Declared("b", ("t",), ("u",))
    c, d = _Declared("c", ("t",), ("v",)), _Declared("d", ("u", "v"), ("w",))
    assert [s.name for s in ordered([d, c, b, a])] == ["a", "c", "b", "d"]
    assert levels([a, b, c, d]) == [["a"], ["b", "c"], ["d"]]
    with pytest.raises(PlanError, match="stage b: no stage of this flow writes its input table 't'"):
        ordered([b, d])
    with pytest.raises(PlanError, match="stage c: its upstream 'z'"):
        ordered([a, _Declared("c", ("t",), ("v",), upstream=("z",))])
    assert ordered([a, _Declared("c", ("t",), ("v",), upstream=("z",))], given={"z"})
    x, y = _Declared("x", ("q",), ("p",)), _Declared("y", ("p",), ("q",))
    with pytest.raises(PlanError, match="x, y depend on each other in a cycle"):
        ordered([x, y])
