"""Scope that does what it says (interleaf/scope.py): `--doc` by file name with or without `.pdf`,
in any case, or by a doc_id prefix, several times; a name matching nothing or a rejected file is an
error naming it; an empty question is refused before retrieval; a question file's line naming an
unknown document is a reject while the rest are answered. All through the real CLI on the session's
ingested corpus (docs/ + bad/)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import IngestedWarehouse, run_cli, sql_rows

QUESTION = "What Top-20 retrieval accuracy does DPR reach on Natural Questions?"


def _context_documents(root: Path, stdout: str) -> set[str]:
    """The documents of every quote the latest `ask` put in its context."""
    qset = json.loads(stdout)["qset_id"] if stdout.lstrip().startswith("{") else None
    assert qset, stdout
    rows = sql_rows(
        root,
        f"select distinct d.name from contexts c join documents d using (doc_id) where c.qset_id = '{qset}' order by 1",
    )
    return {r["name"] for r in rows}


@pytest.mark.parametrize("name", ["dpr-emnlp2020.pdf", "dpr-emnlp2020", "DPR-EMNLP2020.PDF", " Dpr-Emnlp2020 "])
def test_doc_names_resolve_to_the_one_document(corpus_warehouse: IngestedWarehouse, name: str) -> None:
    result = run_cli(corpus_warehouse.root, "ask", QUESTION, "--doc", name, "--json")
    assert _context_documents(corpus_warehouse.root, result.stdout) == {"dpr-emnlp2020.pdf"}


def test_doc_id_prefix_and_several_documents(corpus_warehouse: IngestedWarehouse) -> None:
    root = corpus_warehouse.root
    [row] = sql_rows(root, "select doc_id from documents where name = 'mavis-aaai2026.pdf'")
    result = run_cli(root, "ask", QUESTION, "--doc", row["doc_id"][:10], "--doc", "dpr-emnlp2020", "--json")
    assert _context_documents(root, result.stdout) == {"dpr-emnlp2020.pdf", "mavis-aaai2026.pdf"}


def test_unknown_document_exits_1_with_the_closest_names(corpus_warehouse: IngestedWarehouse) -> None:
    result = run_cli(corpus_warehouse.root, "ask", QUESTION, "--doc", "dpr-emnlp2021.pdf", check=False)
    assert result.returncode == 1
    assert "'dpr-emnlp2021.pdf'" in result.stderr + result.stdout
    assert "dpr-emnlp2020.pdf" in result.stderr + result.stdout  # the closest name offered
    nothing = run_cli(corpus_warehouse.root, "ask", QUESTION, "--doc", "nosuch.pdf", check=False)
    assert nothing.returncode == 1 and "nosuch.pdf" in nothing.stderr + nothing.stdout


def test_rejected_document_says_it_was_rejected_and_why(corpus_warehouse: IngestedWarehouse) -> None:
    result = run_cli(corpus_warehouse.root, "ask", QUESTION, "--doc", "password.pdf", check=False)
    said = result.stderr + result.stdout
    assert result.returncode == 1
    assert "rejected" in said and re.search(r"password|encrypt", said, re.I), said


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_refused_before_retrieval(corpus_warehouse: IngestedWarehouse, question: str) -> None:
    before = sql_rows(corpus_warehouse.root, "select count(*) n from runs")[0]["n"]
    result = run_cli(corpus_warehouse.root, "ask", question, check=False)
    assert result.returncode == 1 and "empty" in result.stderr + result.stdout
    assert sql_rows(corpus_warehouse.root, "select count(*) n from runs")[0]["n"] == before


def test_scope_doc_without_a_document(corpus_warehouse: IngestedWarehouse) -> None:
    result = run_cli(corpus_warehouse.root, "ask", QUESTION, "--scope", "doc", check=False)
    assert result.returncode == 1 and "--doc" in result.stderr + result.stdout
    bad = run_cli(corpus_warehouse.root, "ask", QUESTION, "--scope", "everything", check=False)
    assert bad.returncode == 1 and "everything" in bad.stderr + bad.stdout


def test_question_file_line_naming_an_unknown_document_is_a_reject(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    lines = [
        {"id": "s1", "question": QUESTION, "doc": "dpr-emnlp2020"},
        {"id": "s2", "question": QUESTION, "doc": "no-such-paper.pdf"},
        {"id": "s3", "question": "What does MAVIS stand for?"},  # no document: asked over the whole corpus
    ]
    qa = tmp_path / "scoped.jsonl"
    qa.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    root = corpus_warehouse.root
    result = run_cli(root, "answer", "--qa", str(qa), "--scope", "doc")
    assert "s2" in result.stdout and "no-such-paper.pdf" in result.stdout
    qset = re.search(r"question set (\w+)", result.stdout).group(1)
    answered = sql_rows(root, f"select question_id from answers where qset_id = '{qset}' and scope = 'doc' order by 1")
    assert [r["question_id"] for r in answered] == ["s1", "s3"]
    rejects = sql_rows(root, "select quote_id, reason from rejects where stage = 'questions' order by created_at")
    reasons = {r["reason"] for r in rejects}
    assert any("no-such-paper.pdf" in r and "dpr-emnlp2020.pdf" not in r for r in reasons), reasons
    assert not any("names none" in r for r in reasons), reasons
    # its scope is the whole corpus: it was asked among every quote, s1 among its document's only
    asked: dict[str, int] = {}
    for r in sql_rows(
        root, f"select question_id, n_quotes from asked_clauses where qset_id = '{qset}' and scope = 'doc'"
    ):
        asked[r["question_id"]] = max(asked.get(r["question_id"], 0), r["n_quotes"])
    assert set(asked) == {"s1", "s3"} and asked["s3"] > asked["s1"], asked
    corpus = run_cli(root, "answer", "--qa", str(qa), "--scope", "corpus")
    qset = re.search(r"question set (\w+)", corpus.stdout).group(1)
    answered = sql_rows(
        root, f"select question_id from answers where qset_id = '{qset}' and scope = 'corpus' order by 1"
    )
    assert [r["question_id"] for r in answered] == ["s1", "s3"]
