"""The stage contract: fingerprints follow exactly what changed.

Editing one file of a stage's package changes that stage's fingerprint and those of the stages
after it, and no other. Checked on a copy of the source tree, edited for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.plans import answer_stages, ingest_stages
from interleaf.config import load_settings
from interleaf.stage import SOURCE_ROOT
from pipeline.stage_task import Plan

ALL = ["parse", "describe", "index:bm25", "index:minilm", "questions", "expand", "retrieve", "generate", "evaluate"]
AFTER_RETRIEVE = ["retrieve", "generate", "evaluate"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(SOURCE_ROOT / "interleaf", tmp_path / "interleaf", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def fingerprints(root: Path, overrides: list[str] | None = None) -> dict[str, str]:
    settings = load_settings(overrides=overrides)
    return Plan.of(
        [*ingest_stages(settings), *answer_stages(settings)], {"corpus": "a fixed corpus"}, root=root
    ).fingerprints


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [s for s in ALL if before[s] != after[s]]


@pytest.mark.parametrize(
    ("edited", "expected"),
    [
        ("interleaf/describe/offline_describer.py", ["describe", "index:bm25", "index:minilm", *AFTER_RETRIEVE]),
        ("interleaf/parse/layout/reading_order.py", [*ALL[:4], *AFTER_RETRIEVE]),
        ("interleaf/index/dense.py", ["index:bm25", "index:minilm", *AFTER_RETRIEVE]),
        ("interleaf/expand/rules.py", ["expand", *AFTER_RETRIEVE]),
        ("interleaf/retrieve/fusion.py", AFTER_RETRIEVE),
        ("interleaf/generate/offline.py", ["generate", "evaluate"]),
        ("interleaf/evaluate/recall.py", ["evaluate"]),
    ],
)
def test_editing_one_file_changes_that_stage_and_those_after_it(tree: Path, edited: str, expected: list[str]) -> None:
    before = fingerprints(tree)
    assert fingerprints(tree) == before  # deterministic
    path = tree / edited
    path.write_text(path.read_text() + "\n# an edit\n")
    assert changed(before, fingerprints(tree)) == expected


def test_config_changes_the_stage_that_reads_it_and_the_ones_after_it(tree: Path) -> None:
    before = fingerprints(tree)
    after_describe = ["describe", "index:bm25", "index:minilm", *AFTER_RETRIEVE]
    assert changed(before, fingerprints(tree, ["describe.max_references=1"])) == after_describe
    # how retrievers are fused changes retrieval only: the stored index stays
    assert changed(before, fingerprints(tree, ["retrieve.rrf_k=30"])) == AFTER_RETRIEVE
    assert changed(before, fingerprints(tree, ["retrieve.scope=corpus"])) == AFTER_RETRIEVE
    # switching the answering model recomputes nothing before generate
    assert changed(before, fingerprints(tree, ["generate.offline.max_words=120"])) == ["generate", "evaluate"]
    # a speed setting changes nothing that is stored
    assert changed(before, fingerprints(tree, ["parse.workers=1"])) == []


def test_the_ocr_engine_version_is_part_of_describe(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from interleaf import versions

    before = fingerprints(tree)
    real = versions.package_version
    monkeypatch.setattr(versions, "package_version", lambda n: "99.0" if n == "rapidocr" else real(n))
    after = fingerprints(tree)
    assert "describe" in changed(before, after) and before["parse"] != after["parse"]  # parse runs RapidOCR too
