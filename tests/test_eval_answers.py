"""`interleaf eval --qa` judges the answers themselves (qa_dev_answers.jsonl's `must_include` and
`answerable`), the same way for any generator: the offline composer, and a model behind an
OpenAI-compatible server (tests/support/openai_server.py) that abstains on the question the document does
not answer. On a warehouse holding the one-page corrosion paper of the shared corpus, with three of
the file's questions about it: two answerable (a006, a009) and one not (a029, 12 g is not in the table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, sql_rows
from tests.support.openai_server import OpenAIServer, Seen, running

ASKED = ("a006", "a009", "a029")
ANSWER_METRICS = (
    "answer_correct",
    "abstention_recall",
    "false_abstention",
    "median_words",
    "answers_addressing_question",
)


@pytest.fixture(scope="module")
def corrosion(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("answers") / "warehouse"
    run_cli(root, "ingest", str(corpus / "docs" / "corrosion-plot-table.pdf"))
    lines = [
        line for line in (corpus / "qa_dev_answers.jsonl").read_text().splitlines() if json.loads(line)["id"] in ASKED
    ]
    qa = root.parent / "corrosion_answers.jsonl"
    qa.write_text("\n".join(lines) + "\n")
    return root, qa


def _metrics(payload: dict, breakdown: str = "all") -> dict[tuple[str, str], dict]:
    return {(m["metric"], m["group_name"]): m for m in payload["metrics"] if m["breakdown"] == breakdown}


def test_offline_answers_are_judged_by_question_type(corrosion: tuple[Path, Path]) -> None:
    root, qa = corrosion
    payload = json.loads(run_cli(root, "eval", "--qa", str(qa), "--scope", "doc", "--json").stdout)
    overall = _metrics(payload)
    # n: the answerable questions (2), the unanswerable one (1), every answer (3)
    assert [overall[(m, "all")]["n"] for m in ANSWER_METRICS] == [2, 1, 2, 3, 3]
    assert all(overall[(m, "all")]["value"] is not None for m in ANSWER_METRICS)
    by_type = _metrics(payload, "question_type")
    assert (
        by_type[("answer_correct", "table_cell")]["n"] == 1 and by_type[("answer_correct", "table_compare")]["n"] == 1
    )
    assert by_type[("abstention_recall", "unanswerable")]["n"] == 1
    assert by_type[("answer_correct", "unanswerable")]["value"] is None  # nothing to include: not computed
    # the official parsing of the citations beside Interleaf's
    assert overall[("quote_f1_mmdocrag", "all")]["value"] is not None
    shown = run_cli(root, "eval", "--qa", str(qa), "--scope", "doc").stdout
    assert "corrosion_answers.jsonl · doc" in shown and "answer_correct" in shown and "question type" in shown


def test_a_model_that_abstains_is_scored_the_same_way(corrosion: tuple[Path, Path]) -> None:
    root, qa = corrosion

    def reply(seen: Seen) -> str:
        if "12 g of egg-shell" in seen.prompt:
            return "The documents do not say what corrosion rate 12 g gives: the table stops at 10 g."
        if "8 g of egg-shell" in seen.prompt:
            return "With 8 g of egg shell the corrosion potential Ecorr is \u22120.5896 V [1]."
        return "10 g of egg shell cuts the corrosion rate from 2.8163 to 0.0919 mm/year [1]."

    with running(OpenAIServer("served-model", None, reply, allow_images=False)) as server:
        sets = [
            "generate.backend=openai",
            f"generate.openai.base_url={server.base_url}",
            "generate.openai.model=served-model",
        ]
        args = [a for s in sets for a in ("--set", s)]
        payload = json.loads(run_cli(root, *args, "eval", "--qa", str(qa), "--scope", "doc", "--json").stdout)
    assert not server.errors and len(server.seen) == 3, server.errors
    overall = _metrics(payload)
    assert (overall[("answer_correct", "all")]["value"], overall[("answer_correct", "all")]["n"]) == (1.0, 2)
    assert (overall[("abstention_recall", "all")]["value"], overall[("abstention_recall", "all")]["n"]) == (1.0, 1)
    assert (overall[("false_abstention", "all")]["value"], overall[("false_abstention", "all")]["n"]) == (0.0, 2)
    stored = sql_rows(
        root,
        f"select question_id, answerable, generator from answers where qset_id = '{payload['qset_id']}' "
        "and generator = 'openai' order by question_id",
    )
    assert [(r["question_id"], r["answerable"]) for r in stored] == [("a006", True), ("a009", True), ("a029", False)]
