"""Figures written by the command that measures them (docs/measured/<name>.md): the figures, the
command as typed, the commit it ran at and the machine's CPU, never edited by hand."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path


def current_commit() -> str:
    """HEAD's short hash, and whether the working tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + (" with uncommitted changes" if dirty.stdout.strip() else "")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def write_measured(path: Path, title: str, figures: str, argv: Sequence[str], program: str = "interleaf") -> None:
    """`figures` (plain text) under `title`, with what produced them (`program` and `argv`'s
    arguments); written whole, then renamed."""
    command = f"{program} " + shlex.join(list(argv[1:]))
    text = (
        f"# {title}\n\n"
        f"Written by `{command}` at commit {current_commit()} on {datetime.date.today().isoformat()}, "
        f"on {_cpu()}. Do not edit: run the command again.\n\n```\n{figures}\n```\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
