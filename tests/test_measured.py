"""Figures in docs/measured/ are written by the command that measured them: each file names its
command and the commit it ran at, and `benchmarks/record.py` (what `make bench`, `make faults` and
`make load` run their commands through) writes such a file from what a command printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

HEADER = re.compile(
    r"^Written by `(?P<command>(?:interleaf|python) [^`]+)` at commit (?P<commit>[0-9a-f]{7,40})\b", re.M
)


def test_every_measured_file_names_its_command_and_commit() -> None:
    files = sorted((REPO / "docs" / "measured").glob("*.md"))
    assert files, "docs/measured/ holds no file"
    for path in files:
        found = HEADER.search(path.read_text(encoding="utf-8"))
        assert found, f"{path.name}: no `Written by <command> at commit <hash>` line"
        assert "uncommitted" not in found.group(0), path.name


def test_record_writes_what_the_command_printed_and_keeps_the_last_file_when_it_fails(tmp_path: Path) -> None:
    script = "import sys; print('rows 12'); print('seconds 3.5'); sys.exit(int(sys.argv[1]))"
    record = [sys.executable, "-m", "benchmarks.record", "probe", "--measured", str(tmp_path), "--"]
    ok = subprocess.run([*record, sys.executable, "-c", script, "0"], cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0 and "rows 12" in ok.stdout, ok.stderr
    text = (tmp_path / "probe.md").read_text()
    assert "rows 12\nseconds 3.5" in text
    found = HEADER.search(text)
    assert found and found.group("command").startswith("python -c ")
    failed = subprocess.run(
        [*record, sys.executable, "-c", script.replace("12", "13"), "3"], cwd=REPO, text=True, capture_output=True
    )
    assert failed.returncode == 3
    assert "rows 12" in (tmp_path / "probe.md").read_text()  # a failed run leaves the last good figures
