"""The CLI as scripts and CI run it: stdout and stderr piped, none of the Makefile's environment.
Each test runs the real `interleaf` as a subprocess on tiny inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, sql_rows

# what the Makefile or a terminal would set, and a script or a CI job does not
UNSET = ("COLUMNS", "DO_NOT_TRACK", "PREFECT_SERVER_ANALYTICS_ENABLED", "PREFECT_LOGGING_LEVEL", "PREFECT_HOME")


def script_env(warehouse: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    if warehouse is not None:
        env["INTERLEAF_WAREHOUSE"] = str(warehouse)
    return env


def interleaf(
    warehouse: Path, *args: str, python: tuple[str, ...] = (), timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *python, "-m", "interleaf.cli", *args],
        cwd=REPO,
        env=script_env(warehouse),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("override", "names"),
    [
        ("retrieve.budget=abc", ["retrieve.budget", "budgets"]),  # an unknown key: what the section accepts
        ("parse.backend=nosuch", ["parse.backend", "'layout', 'mineru' or 'content_list'"]),  # a bad enum
        ("retrieve.budgets=abc", ["retrieve.budgets", "list[int]"]),  # a bad type
        ("retrieve.budgets=[1,", ["retrieve.budgets", "not valid YAML"]),  # a value YAML cannot read
    ],
)
def test_a_bad_config_value_is_one_line_naming_the_key(tmp_path: Path, override: str, names: list[str]) -> None:
    done = interleaf(tmp_path / "w", "--set", override, "runs")
    assert done.returncode == 2
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: --set ") and all(n in lines[0] for n in names), lines[0]


def test_non_pdfs_are_rejected_before_any_model_loads_and_ingest_fails(tmp_path: Path, corpus: Path) -> None:
    warehouse = tmp_path / "w"
    bad = [corpus / "bad" / "text-renamed.pdf", corpus / "bad" / "empty.pdf", corpus / "bad" / "password.pdf"]
    done = interleaf(warehouse, "ingest", *map(str, bad), python=("-X", "importtime"))
    assert done.returncode == 1
    assert "error: every input was rejected (3 documents): nothing was ingested" in done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    # neither the layout model's package nor Prefect's server (a flow run starts it) was imported
    assert "rapid_layout" not in imported and not any(m.startswith("prefect.server") for m in imported)
    # the reasons are in rejects, as before
    reasons = {Path(r["path"]).name: r["reason"] for r in sql_rows(warehouse, "select path, reason from rejects")}
    assert reasons["text-renamed.pdf"].startswith("not a PDF")
    assert reasons["empty.pdf"].startswith("empty file")
    assert reasons["password.pdf"].startswith("encrypted")
    # a log says so as it happens, and the report is not folded to 80 columns
    assert "parse text-renamed.pdf: rejected, not a PDF" in done.stderr
    report = next(line for line in done.stdout.splitlines() if line.startswith("run "))
    assert len(report) > 80 and report.rstrip().endswith("pages/s)")
    # asked again: still nothing ingested, still an error
    again = interleaf(warehouse, "ingest", str(bad[2]))
    assert again.returncode == 1 and "every input was rejected (1 document)" in again.stderr


def test_piped_tables_keep_their_width(tmp_path: Path) -> None:
    done = interleaf(tmp_path / "w", "sql", "select repeat('x', 150) as wide, 'next column' as b")
    assert done.returncode == 0
    assert any("x" * 150 in line and "next column" in line for line in done.stdout.splitlines()), done.stdout


def test_piped_sql_and_runs_are_plain_aligned_columns(tmp_path: Path) -> None:
    """No box-drawing characters in a pipe: columns two spaces apart, counted in terminal cells (a CJK
    character takes two), a value of two lines on two lines, an empty (NULL) cell blank."""
    query = (
        "select 1 as n, 'short' as word, null as x union all select 22, 'a longer' || chr(10) || 'two-line word', 3 "
        "union all select 333, '表格 cjk', 'z' order by n"
    )
    done = interleaf(tmp_path / "w", "sql", query)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "n    word           x\n"
        "---  -------------  -\n"
        "1    short\n"
        "22   a longer       3\n"
        "     two-line word\n"
        "333  表格 cjk       z\n"
    )
    runs = interleaf(tmp_path / "w", "runs")
    assert runs.returncode == 0, runs.stderr
    assert runs.stdout.splitlines()[:2] == [
        "run_id  stage  status  items  rows  started  seconds  fingerprint",
        "------  -----  ------  -----  ----  -------  -------  -----------",
    ]


def test_global_options_are_taken_after_the_command_too(tmp_path: Path) -> None:
    """`--warehouse`, `--config`, `--set` and `--model` after the command, as scripts append them;
    `--set` items from both sides in order (the later wins); another option given on both sides with
    two values is refused. `serve --new-key` shows where: it writes the key's hash into the warehouse."""
    from typer.main import get_command

    from interleaf.cli import app

    env, after, before = tmp_path / "env", tmp_path / "after", tmp_path / "before"
    done = interleaf(env, "serve", "--new-key", "tester", "--warehouse", str(after))
    assert done.returncode == 0, done.stderr
    assert (after / "api-keys").is_file() and not env.exists()

    first, second = tmp_path / "keys-first", tmp_path / "keys-second"
    new_key = ("serve", "--new-key", "t")
    done = interleaf(env, "--set", f"serve.api.keys_file={first}", *new_key, "--set", f"serve.api.keys_file={second}")
    assert done.returncode == 0, done.stderr
    assert second.is_file() and not first.exists()

    done = interleaf(env, "gc", "--dry-run", "--warehouse", str(after))  # a command of interleaf/cli/maintenance.py
    assert done.returncode == 0 and done.stdout.startswith("gc: would free"), done.stderr
    assert not env.exists()
    for option, value, says in [
        ("--config", str(tmp_path / "none.yaml"), "cannot read config"),
        ("--model", "nosuch", "unknown model preset 'nosuch'"),
        ("--set", "parse.backend=nosuch", "parse.backend"),
    ]:
        done = interleaf(env, "sql", "select 1", option, value)
        assert done.returncode == 2 and says in done.stderr, (option, done.stderr)
    done = interleaf(env, "--warehouse", str(before), "sql", "select 1", "--warehouse", str(after))
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: --warehouse given before `sql`"), done.stderr

    # every command takes them, eval's and export's (interleaf/cli/evaluation.py) and serve's included, and lists them
    group = get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        names = {p.name for p in command.params}
        assert {"warehouse", "config", "set_", "model"} <= names, name


def test_prefect_telemetry_and_banner_stay_off_however_the_cli_is_started(tmp_path: Path) -> None:
    """Imported, not run from the Makefile: Prefect reads its settings when it is first imported."""
    probe = (
        "import interleaf.cli, prefect\n"
        "from prefect._internal.analytics import is_telemetry_enabled\n"
        "from prefect.settings import get_current_settings as current\n"
        "print(is_telemetry_enabled(), current().server.analytics_enabled, current().logging.level)\n"
    )
    env = script_env() | {"PREFECT_HOME": str(tmp_path / ".prefect")}
    for name in ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD"):
        env.pop(name, None)  # a CI runner turns Prefect's telemetry off by itself: test without one
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "WARNING"]


@pytest.mark.slow
def test_ingest_in_a_pipe_prints_a_line_per_document_and_stage(tmp_path: Path, corpus: Path) -> None:
    # any one-page document: this one parses in ~1 s (the scanned backus-1977-page.pdf took 14 s)
    good, bad = corpus / "docs" / "layoutparser-table-page.pdf", corpus / "bad" / "text-renamed.pdf"
    done = interleaf(tmp_path / "w", "ingest", str(good), str(bad))
    assert done.returncode == 0, done.stderr  # one input was good: not every input was rejected
    lines = done.stderr.splitlines()
    for stage in ("parse", "describe", "index:bm25", "index:minilm"):
        assert any(line.startswith(f"{stage} {good.name}: ok") for line in lines), (stage, lines)
    assert any(line.startswith(f"parse {bad.name}: rejected") for line in lines)
    # no Prefect banner, although its temporary server ran the flow
    assert "Starting temporary server" not in done.stdout + done.stderr
