"""`make load`: the HTTP server under load, on loopback only.

Serves a copy of the warehouse (so the run starts from the same stored state each time and writes
nothing into yours) with `interleaf serve` in its own process, then:

1. warm /v1/ask: each question of qa_dev.jsonl once, one at a time, through HTTP, each a question
   the copy has not answered yet (every query stage runs and is stored), about its document;
2. load: N concurrent clients for S seconds (16 for 60 s by default) asking qa_dev's questions in
   turn; one request in four is a question not asked before (the question with a suffix), so writes
   run under concurrency too, the rest are read back from what phase 1 stored.

Prints requests/s, p50/p95/p99, errors, and the server's RSS at start and end.
Targets (issue 17): warm /v1/ask p50 < 300 ms; under load 0 errors and RSS growth < 10%.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.stopping import exit_on_sigterm  # noqa: E402

FRESH_EVERY = 4  # one load request in this many asks a question not stored yet


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentiles(ms: list[float]) -> str:
    if not ms:
        return "no samples"
    p = np.percentile(np.asarray(ms), [50, 95, 99])
    return f"p50 {p[0]:7.1f} ms   p95 {p[1]:7.1f} ms   p99 {p[2]:7.1f} ms   (n={len(ms)})"


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def start_server(root: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "interleaf.cli", "--warehouse", str(root)]
    command += ["--set", "serve.api.rate_limit.per_minute=0"]  # the clients are this benchmark: no limit
    command += ["serve", "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    env = {**os.environ, "PREFECT_HOME": str(root.parent / ".prefect-home")}
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)


def wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 600) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            return httpx.get(f"{url}/healthz", timeout=2).json()
        except httpx.HTTPError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer /healthz within {timeout_s:.0f} s")


def ask_body(item: dict, suffix: str = "") -> dict:
    return {"question": item["question"] + suffix, "documents": [item["doc"]] if item.get("doc") else []}


def warm_pass(url: str, items: list[dict]) -> tuple[list[float], int, list[str]]:
    latencies, stored, errors = [], 0, []
    with httpx.Client(base_url=url, timeout=120) as client:
        for item in items:
            started = time.perf_counter()
            response = client.post("/v1/ask", json=ask_body(item))
            latencies.append(1000 * (time.perf_counter() - started))
            if response.status_code != 200:
                errors.append(f"{item['id']}: HTTP {response.status_code} {response.text[:200]}")
            else:
                stored += response.json()["timing"]["stored"]
    return latencies, stored, errors


async def load_phase(url: str, items: list[dict], clients: int, seconds: float) -> dict:
    deadline = time.monotonic() + seconds
    stored_ms: list[float] = []
    fresh_ms: list[float] = []
    errors: list[str] = []
    counter = 0

    async def client_loop(client_id: int, http: httpx.AsyncClient) -> None:
        nonlocal counter
        turn = client_id
        while time.monotonic() < deadline:
            counter += 1
            fresh = counter % FRESH_EVERY == 0
            item = items[turn % len(items)]
            turn += clients
            body = ask_body(item, f" (load {counter})" if fresh else "")
            started = time.perf_counter()
            try:
                response = await http.post("/v1/ask", json=body)
                ok = response.status_code == 200
                if not ok:
                    errors.append(f"HTTP {response.status_code}: {response.text[:200]}")
            except httpx.HTTPError as exc:
                ok = False
                errors.append(f"{type(exc).__name__}: {exc}")
            if ok:
                (fresh_ms if fresh else stored_ms).append(1000 * (time.perf_counter() - started))

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(i, http) for i in range(clients)))
        elapsed = time.perf_counter() - started
    return {"stored": stored_ms, "fresh": fresh_ms, "errors": errors, "elapsed": elapsed}


def main() -> None:
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_corpus = os.environ.get("INTERLEAF_CORPUS", str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--corpus", default=default_corpus, help="folder holding qa_dev.jsonl")
    parser.add_argument("--warehouse", default=os.environ.get("INTERLEAF_WAREHOUSE", str(REPO / "warehouse" / "data")))
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if not 1 <= args.clients <= 64 or not 1 <= args.seconds <= 600:
        raise SystemExit("bounded on purpose: 1-64 clients for 1-600 s")
    source = Path(args.warehouse)
    if not (source / "_state" / "current.json").exists():
        raise SystemExit(f"no ingested warehouse at {source}: run `make e2e` (or set INTERLEAF_WAREHOUSE)")
    items = [json.loads(line) for line in (Path(args.corpus) / "qa_dev.jsonl").read_text().splitlines() if line]

    folder = Path(tempfile.mkdtemp(prefix="interleaf-load-"))
    try:
        root = folder / "warehouse"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".*.tmp-*", ".lock"))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = folder / "server.log"
        started = time.perf_counter()
        server = start_server(root, port, log)
        try:
            health = wait_healthy(url, server, log)
            print(
                f"server: {url} (loopback), pid {server.pid}, up in {time.perf_counter() - started:.1f} s; "
                f"{health['documents']} documents, {health['index']['quotes']} quotes indexed "
                f"(index loaded in {health['index']['load_seconds']} s); RSS {rss_mb(server.pid):.0f} MB"
            )
            process = psutil.Process(server.pid)
            cpu = cpu_seconds(process)
            warm, stored, warm_errors = warm_pass(url, items)
            fresh_cpu = (cpu_seconds(process) - cpu) / len(items)
            print(f"warm /v1/ask, {len(items)} qa_dev questions one at a time, new to the server ({stored} stored):")
            print(f"  {percentiles(warm)}   server CPU {1000 * fresh_cpu:.0f} ms/request   errors {len(warm_errors)}")
            cpu = cpu_seconds(process)
            again, stored, again_errors = warm_pass(url, items)
            again_cpu = (cpu_seconds(process) - cpu) / len(items)
            print(f"warm /v1/ask, the same questions again, read back ({stored} stored):")
            print(f"  {percentiles(again)}   server CPU {1000 * again_cpu:.0f} ms/request   errors {len(again_errors)}")
            warm_errors += again_errors
            for line in warm_errors[:5]:
                print(f"    {line}")
            print(
                f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work slows each figure)"
            )
            rss_start = rss_mb(server.pid)
            cpu = cpu_seconds(process)
            result = asyncio.run(load_phase(url, items, args.clients, args.seconds))
            rss_end = rss_mb(server.pid)
            load_cpu = cpu_seconds(process) - cpu
            done = len(result["stored"]) + len(result["fresh"])
            every = result["stored"] + result["fresh"]
            print(f"load: {args.clients} concurrent clients for {result['elapsed']:.1f} s, POST /v1/ask")
            print(f"  requests/s {done / result['elapsed']:.2f}   requests {done}   errors {len(result['errors'])}")
            print(f"  server CPU {1000 * load_cpu / max(done, 1):.0f} ms/request")
            print(f"  all      {percentiles(every)}")
            print(f"  stored   {percentiles(result['stored'])}")
            print(f"  fresh    {percentiles(result['fresh'])}")
            for line in sorted(set(result["errors"]))[:5]:
                print(f"    {line}")
            growth = 100 * (rss_end - rss_start) / rss_start
            print(f"  server RSS: start {rss_start:.0f} MB, end {rss_end:.0f} MB ({growth:+.1f}%)")
            targets = [
                ("warm /v1/ask p50 < 300 ms", bool(warm) and float(np.percentile(warm, 50)) < 300),
                ("0 errors", not result["errors"] and not warm_errors),
                ("RSS growth < 10%", growth < 10),
            ]
            print("targets: " + "; ".join(f"{name}: {'met' if ok else 'NOT met'}" for name, ok in targets))
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
