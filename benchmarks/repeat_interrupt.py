"""The stop of tests/test_interrupt.py, repeated: an ingest of three documents of docs/, sent SIGINT
or SIGTERM once its first parse unit runs, with a temporary Prefect server of its own or the one
shared server a test session uses, `--count` times each (the four kinds taken in turn, so a change
of load on the machine falls on all of them). A stop passes when the command exits 130 within 10 s,
prints its one `interrupted:` line and nothing after it (no traceback, no ERROR from a server going
away), and leaves no process of its own running. Prints each stop, then the counts, with the stops
whose own server logged an error as it stopped (in its log, not a failure: what the stop's order
should keep rare).

    python benchmarks/repeat_interrupt.py [--count 30] [--load 2] [--corpus ../shared/corpus]

What goes wrong by timing shows only now and then, so the full check is `--count 30`, on a machine
with other work (`--load` adds busy processes of its own). Exit status 1 if any stop failed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402

from benchmarks.stopping import exit_on_sigterm  # noqa: E402
from interleaf.runtime.prefect_server import LOGS  # noqa: E402
from tests.support.prefect_home import cli_env, share_server  # noqa: E402
from tests.support.scratch import scratch_folder  # noqa: E402

DOCS = ["figures-example.pdf", "reliance-overview.pdf", "cyber-leadership-brief.pdf"]  # the tests'
EXIT_CODE = 130
WITHIN_S = 10.0  # what the interrupt promises: the command's exit, its server's stop included
START_S = 300.0  # for the first parse unit to begin (models loading on a busy machine)
GONE_S = 5.0  # for the command's children to be gone after its exit (they watch their parent)
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
SERVERS = ("own", "shared")
_ERROR = re.compile(r"^(?:\S+ \| (?:ERROR|CRITICAL) |(?:ERROR|CRITICAL):|Traceback)")


@dataclass
class Stop:
    kind: str
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    stderr: str = ""
    server_errors: int = 0  # error records in the log of the command's own server (not a failure)


def after_interrupt_line(err: str) -> str | None:
    """What the command wrote to stderr after its `interrupted:` line (None: no such line)."""
    lines = err.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith("interrupted:"):
            return "".join(lines[number + 1 :])
    return None


def stop_once(folder: Path, files: list[str], sig: signal.Signals, server: str) -> Stop:
    stop = Stop(f"{sig.name} {server} server")
    root = folder / "warehouse"
    err_path = folder / "stderr"
    with err_path.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "interleaf.cli", "ingest", *files],
            cwd=REPO,
            env=cli_env(root, own_server=server == "own"),
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            start_new_session=True,  # its own group, killed whole if it does not stop
        )
    try:
        deadline = time.monotonic() + START_S
        while proc.poll() is None and time.monotonic() < deadline and not list(root.glob("runs/ledger/*__parse__*")):
            time.sleep(0.05)
        if proc.poll() is not None or time.monotonic() >= deadline:
            ended = f"ended (exit {proc.returncode})" if proc.poll() is not None else "did not begin a unit"
            stop.problems.append(f"not stopped: it {ended} first")
            stop.stderr = err_path.read_text(errors="replace")
            return stop
        time.sleep(1.0)  # the page workers are at work
        children = psutil.Process(proc.pid).children(recursive=True)
        sent = time.monotonic()
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=WITHIN_S)
        except subprocess.TimeoutExpired:
            proc.wait(timeout=60)  # how late it was, still
        stop.seconds = time.monotonic() - sent
        left = _left_running(children)
    finally:
        with contextlib.suppress(ProcessLookupError):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    # read once its children are gone: a server still stopping wrote to the command's stderr
    stop.stderr = err_path.read_text(errors="replace")
    for log in (folder / ".prefect-home" / LOGS).glob("*.log"):
        stop.server_errors += sum(1 for line in log.read_text(errors="replace").splitlines() if _ERROR.match(line))
    if proc.returncode != EXIT_CODE:
        stop.problems.append(f"exit {proc.returncode}")
    if stop.seconds >= WITHIN_S:
        stop.problems.append(f"{stop.seconds:.1f} s")
    if left:
        stop.problems.append(f"left running: {left}")
    lines = [line for line in stop.stderr.splitlines() if line.startswith("interrupted:")]
    if len(lines) != 1:
        stop.problems.append(f"{len(lines)} interrupted lines")
    if "Traceback" in stop.stderr:
        stop.problems.append("a traceback")
    if "ERROR" in stop.stderr:
        stop.problems.append("an ERROR line")
    if after_interrupt_line(stop.stderr):
        stop.problems.append("output after the interrupted line")
    return stop


def _left_running(children: list[psutil.Process]) -> list[str]:
    deadline = time.monotonic() + GONE_S
    while True:
        left = []
        for child in children:
            with contextlib.suppress(psutil.Error):
                if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                    left.append(" ".join(child.cmdline()[:4]))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=30, help="stops of each kind (default 30)")
    ap.add_argument("--signals", default="SIGINT,SIGTERM", help="of SIGINT,SIGTERM")
    ap.add_argument("--servers", default="own,shared", help="of own,shared")
    ap.add_argument("--load", type=int, default=0, help="busy processes started beside the stops (default 0)")
    ap.add_argument("--corpus", default=os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus")))
    args = ap.parse_args()
    signals = [SIGNALS[name] for name in args.signals.split(",")]
    servers = [name for name in args.servers.split(",") if name in SERVERS]
    files = [str(Path(args.corpus) / "docs" / name) for name in DOCS]
    if missing := [name for name in files if not Path(name).is_file()]:
        raise SystemExit(f"not found: {', '.join(missing)} (--corpus)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if "shared" in servers:
        share_server()
    scratch = scratch_folder("interleaf-repeat-interrupt-")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    stops: list[Stop] = []
    try:
        for number in range(args.count):
            for sig in signals:
                for server in servers:
                    folder = scratch / f"{number}-{sig.name}-{server}"
                    folder.mkdir()
                    stop = stop_once(folder, files, sig, server)
                    stops.append(stop)
                    verdict = "; ".join(stop.problems) or "ok"
                    logged = f" (its server's log: {stop.server_errors} error lines)" if stop.server_errors else ""
                    print(f"{number + 1:>3} {stop.kind:<22} {stop.seconds:5.1f} s  {verdict}{logged}", flush=True)
                    if stop.problems:
                        print("    " + "\n    ".join(stop.stderr.splitlines()[-40:]), flush=True)
                    shutil.rmtree(folder, ignore_errors=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f"\n{'kind':<22} {'ok':>4} {'failed':>6} {'median s':>9} {'max s':>6} {'server logged errors':>21}")
    for kind in dict.fromkeys(stop.kind for stop in stops):
        mine = [stop for stop in stops if stop.kind == kind]
        failed = sum(1 for stop in mine if stop.problems)
        seconds = [stop.seconds for stop in mine if stop.seconds]
        median = statistics.median(seconds) if seconds else 0.0
        logged = sum(1 for stop in mine if stop.server_errors)
        print(
            f"{kind:<22} {len(mine) - failed:>4} {failed:>6} {median:>9.1f} {max(seconds, default=0.0):>6.1f}"
            f" {logged:>21}"
        )
    if any(stop.problems for stop in stops):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
