"""Run a measuring command and write what it prints to docs/measured/<name>.md, with the command,
the commit and the machine (interleaf/measured.py): the figures in the docs are the ones a command
printed, never typed by hand.

    python -m benchmarks.record NAME [--measured DIR] -- COMMAND...

The command's output goes to the terminal as it comes; the file is written only when it exits 0
(a failed or interrupted run leaves the last good figures in place), and its exit status is ours.
Ctrl-C reaches the command through the terminal; SIGTERM is passed on to it (benchmarks/stopping.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm, stopped_at_exit  # noqa: E402
from interleaf.measured import write_measured  # noqa: E402


def record(name: str, command: list[str], measured: Path) -> int:
    printed: list[str] = []
    with stopped_at_exit(subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1)) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            printed.append(line.rstrip("\n"))
        status = proc.wait()
    if status == 0:
        program = Path(command[0]).name if Path(command[0]).name.startswith("python") else command[0]
        write_measured(measured / f"{name}.md", name, "\n".join(printed).strip(), ["", *command[1:]], program)
    return status


def main() -> int:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the file's name under the measured folder, without .md")
    parser.add_argument("--measured", type=Path, default=REPO / "docs" / "measured")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("no command given after --")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    return record(args.name, argv[split + 1 :], args.measured)


if __name__ == "__main__":
    sys.exit(main())
