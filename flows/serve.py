"""`make serve`: a local Prefect server on loopback, and the ingest flow on a cron schedule over
the inbox folder (both from `serve:` in config). Each scheduled run ingests new and changed
files only: unchanged ones are recognised by their SHA-256 and skipped; a file removed from the
inbox leaves the views (`ingest --sync`).

The server is started as a command's temporary one is (interleaf/runtime/prefect_server.py): in a session of
its own, out of reach of a terminal's Ctrl-C, which this process takes: it stops the flow's runner
first (the runner pauses its schedule through the server), then the server, in the order that lets
its database pool close. The server's output goes to a log in the Prefect home, its errors copied
here while it runs. SIGTERM (systemd's stop) takes the same way out.
"""

from __future__ import annotations

import argparse
import signal
import warnings
from pathlib import Path
from types import FrameType

from interleaf.config import load_settings
from interleaf.errors import InterleafError
from interleaf.runtime.prefect_server import PrefectServer, use_api
from warehouse.store import resolve_root

START_S = 90.0


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


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

    # until the runner installs its own (which exits the same way): SIGTERM runs the `finally`
    signal.signal(signal.SIGTERM, _exit)
    server = PrefectServer("The Prefect server")
    try:
        try:
            api_url = server.start(
                host=host,
                port=port,
                timeout_s=START_S,
                env={
                    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                    "PREFECT__SERVER_FINAL": "1",
                    "PREFECT_SERVER_API_HOST": host,  # what the UI's pages call back
                    "PREFECT_SERVER_API_PORT": str(port),
                },
            )
        except InterleafError as exc:
            raise SystemExit(str(exc)) from exc
        use_api(api_url)
        from prefect import flow

        from flows.runner import run_ingest

        @flow(name="scheduled-ingest")
        def scheduled_ingest(inbox: str, warehouse: str) -> dict[str, int]:
            # the warehouse follows the inbox: a file taken out of it leaves the views
            report = run_ingest(Path(warehouse), settings, [inbox], force_from=None, sync=True)
            return {
                "parsed": report.count(report.entry, "ok"),
                "unchanged": report.count(report.entry, "cached"),
                "rejected": report.count(report.entry, "rejected"),
                "dropped": len(report.dropped),
            }

        log = f"; the server's log: {server.log.path}" if server.log and server.log.path else ""
        print(f"serving: {inbox} -> {root} on cron {settings.serve.cron!r}; UI at http://{host}:{port}{log}")
        # Prefect's runner takes SIGTERM with a handler that calls its async stop without awaiting it,
        # then exits (SystemExit, which ends the runner all the same): the warning is no news to a user
        warnings.filterwarnings("ignore", "coroutine 'Runner.astop' was never awaited", RuntimeWarning)
        scheduled_ingest.serve(
            name="inbox",
            cron=settings.serve.cron,
            parameters={"inbox": str(inbox), "warehouse": str(root)},
        )
    finally:
        server.stop()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # a Ctrl-C before the runner took it: the server is stopped, no traceback
        raise SystemExit(130) from None
