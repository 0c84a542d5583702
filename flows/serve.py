"""`make serve`: a local Prefect server on loopback, and the ingest flow on a cron schedule over
the inbox folder (both from `serve:` in config). Each scheduled run ingests new and changed
files only: unchanged ones are recognised by their SHA-256 and skipped; a file removed from the
inbox leaves the views (`ingest --sync`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from interleaf.config import load_settings
from warehouse.store import resolve_root


def wait_until_healthy(api_url: str, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the Prefect server at {api_url} did not become healthy within {timeout_s:.0f}s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default=None)
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    args = ap.parse_args()
    settings = load_settings(args.config, args.overrides)
    root = resolve_root(settings.warehouse)
    inbox = Path(settings.serve.inbox).resolve()
    inbox.mkdir(parents=True, exist_ok=True)
    host, port = settings.serve.host, settings.serve.port
    api_url = f"http://{host}:{port}/api"

    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)],
        env={**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"},
    )
    try:
        wait_until_healthy(api_url)
        os.environ["PREFECT_API_URL"] = api_url
        from prefect import flow

        from flows.runner import run_ingest

        @flow(name="scheduled-ingest")
        def scheduled_ingest(inbox: str, warehouse: str) -> dict[str, int]:
            # the warehouse follows the inbox: a file taken out of it leaves the views
            report = run_ingest(Path(warehouse), settings, [inbox], force_from=None, sync=True)
            return {
                "parsed": report.count("parse", "ok"),
                "unchanged": report.count("parse", "cached"),
                "rejected": report.count("parse", "rejected"),
                "dropped": len(report.dropped),
            }

        print(f"serving: {inbox} -> {root} on cron {settings.serve.cron!r}; UI at http://{host}:{port}")
        scheduled_ingest.serve(
            name="inbox",
            cron=settings.serve.cron,
            parameters={"inbox": str(inbox), "warehouse": str(root)},
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
