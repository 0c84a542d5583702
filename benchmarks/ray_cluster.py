"""A real Ray cluster on this machine's loopback, as several machines would run one: a head node
and worker nodes, each its own `ray start` of this .venv (the tests and `make bench` use it).

Each node runs in the foreground (`--block`) in its own session, so stopping the cluster is
signalling those process groups: any other Ray on this machine is left alone (`ray stop` would
stop every one). The signal is SIGINT, the Ctrl-C that `--block` waits for (on SIGTERM the head's
processes outlived a 30 s grace). Then each node's group is killed, whether its `ray start` ended or
not: the worker node's dashboard and runtime-env agents outlived their `ray start` by ~90 s on this
2-core machine, and waiting for a `ray start` that was slow to end made one test's teardown 60 s.

The nodes run without Ray's token authentication, whatever this machine's `~/.ray` holds: Ray
2.60 turns it on for `ray start` when `~/.ray/auth_token` exists (the first cluster `ray.init()`
starts writes one), and a client given an explicit address never sends the token, so every
connection to the loopback cluster was refused and the Ray test failed on a machine that had once
run `executor.address: null`.

Ray's session files go to a short folder of their own under the system's temp folder, not under
the caller's: a node's sockets live five levels below it, a Unix socket's path is at most 107 bytes,
and a pytest-xdist worker's temp folder made the plasma store's path too long to start the head."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.stopping import signals_held
from interleaf.runtime.ray_engine import node_environment

RAY = str(Path(sys.executable).with_name("ray"))
START_S = 120.0  # a node's first start on a loaded 2-core machine took up to ~40 s
STOP_S = 5.0  # the nodes' grace after SIGINT, then their groups are killed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node(args: list[str], cpus: float, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", f"{cpus:g}", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", **node_environment(cpus)},
            start_new_session=True,
        )


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def alive_nodes(address: str) -> int:
    import ray

    ray.init(address=address, configure_logging=False, log_to_driver=False)
    try:
        return sum(1 for node in ray.nodes() if node["Alive"])
    finally:
        ray.shutdown()


def _alive_or_none(address: str) -> int:
    """The nodes alive, or 0 while the head listens but cannot yet answer."""
    try:
        return alive_nodes(address)
    except ConnectionError:
        return 0


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


@dataclass(frozen=True)
class LocalCluster:
    address: str  # the head's, for `executor.address`
    pids: list[int]  # each node's `ray start`: its processes are under it


@contextmanager
def local_cluster(tmp: Path, nodes: int = 2, cpus: float = 1) -> Iterator[LocalCluster]:
    """A head and `nodes - 1` worker nodes of `cpus` CPUs each on 127.0.0.1. The nodes' logs are
    under `tmp`; Ray's session files are removed with the cluster."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head_log = tmp / "head.log"
    sessions = Path(tempfile.mkdtemp(prefix="ray-"))
    head_args = ["--head", "--port", str(port), "--include-dashboard", "false", "--disable-usage-stats"]
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(_node([*head_args, "--temp-dir", str(sessions)], cpus, head_log))
        deadline = time.monotonic() + START_S
        # the head's GCS takes seconds to listen, and a node started before that gives up; a client
        # asked to connect before then retries for minutes, so the port is watched instead
        while not _listening(port):
            if started[0].poll() is not None:
                raise RuntimeError(f"the Ray head exited with {started[0].returncode}:\n{_tail(head_log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray head is not up after {START_S:g} s:\n{_tail(head_log)}")
            time.sleep(0.5)
        logs = [tmp / f"worker{i}.log" for i in range(1, nodes)]
        started += [_node(["--address", address, "--disable-usage-stats"], cpus, log) for log in logs]
        while _alive_or_none(address) < nodes:
            for node, log in zip(started[1:], logs, strict=True):
                if node.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"a Ray worker node did not join:\n{_tail(log)}")
            time.sleep(1)
        yield LocalCluster(address, [node.pid for node in started])
    finally:
        with signals_held():  # a second Ctrl-C or a SIGTERM must not leave the nodes running
            for node in reversed(started):
                if node.poll() is None:
                    os.killpg(node.pid, signal.SIGINT)
            deadline = time.monotonic() + STOP_S
            for node in started:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.wait(timeout=max(0.0, deadline - time.monotonic()))
                # what is left of the node's group, `ray start` gone or not: its agents outlive it
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(node.pid, signal.SIGKILL)
                node.wait()
            shutil.rmtree(sessions, ignore_errors=True)
