"""interleaf/runtime/prefect_server.py: with no Prefect API named, a command that runs a flow starts the
temporary server itself, in a session of its own, without importing Prefect's server modules into
its own process, and stops it when it ends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import psutil

from tests.conftest import REPO
from tests.support.prefect_home import cli_env

# Runs the CLI in this script's process, then says what the flow's Prefect API was and whether
# Prefect's server modules were imported here (the atexit hooks run last-registered first: this one
# runs after the command has stopped its server).
_INGEST_AND_REPORT = """
import atexit, os, sys
def report():
    print("api:", os.environ.get("PREFECT_API_URL"), "server modules:", "prefect.server.api.server" in sys.modules)
atexit.register(report)
if __name__ == "__main__":
    sys.argv = ["interleaf", *sys.argv[1:]]
    from interleaf.cli import run
    run()
"""


def _servers(command: psutil.Process) -> dict[int, tuple[int, int, psutil.Process]]:
    """The command's uvicorn descendants -> by pid, their parent's pid, their session and process. A
    process the server forks shows the server's command line until it executes its own, so a server's
    children are told apart by their parent."""
    found = {}
    for child in command.children(recursive=True):
        try:
            if "uvicorn" in child.cmdline():
                found[child.pid] = (child.ppid(), os.getsid(child.pid), child)
        except (psutil.NoSuchProcess, ProcessLookupError):  # ended meanwhile
            pass
    return found


def test_with_no_api_named_the_command_starts_and_stops_its_own_server(tmp_path: Path, corpus: Path) -> None:
    script = tmp_path / "ingest_and_report.py"
    script.write_text(_INGEST_AND_REPORT)
    env = cli_env(tmp_path / "warehouse", own_server=True)
    assert "PREFECT_API_URL" not in env
    doc = corpus / "docs" / "layoutparser-table-page.pdf"
    # its output to files: pipes nobody reads while the command runs could fill and stall it
    with (tmp_path / "out").open("w") as out_file, (tmp_path / "err").open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, str(script), "ingest", str(doc)], cwd=REPO, env=env, stdout=out_file, stderr=err_file
        )
        command, command_sid, seen = psutil.Process(proc.pid), os.getsid(proc.pid), {}
        while proc.poll() is None:
            seen |= _servers(command)
            time.sleep(0.2)
    out, err = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert proc.returncode == 0, out + err
    assert "1 parsed, 0 unchanged, 0 rejected, 0 failed" in out, out
    report = out.strip().splitlines()[-1].split()
    assert report[0] == "api:" and report[-1] == "False", report  # Prefect's server modules never imported here
    api = urlparse(report[1])
    assert api.hostname == "127.0.0.1" and api.path == "/api", report
    # one server, in a session of its own (a terminal's Ctrl-C is the command's), gone with the command
    started = {pid: found for pid, found in seen.items() if found[0] not in seen}
    assert len(started) == 1, seen
    ((parent, sid, _),) = started.values()
    assert parent == proc.pid and sid != command_sid
    assert not any(process.is_running() for _, _, process in seen.values()), seen
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", api.port)) != 0, f"something still listens on {api.port}"
