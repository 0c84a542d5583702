"""The Prefect API a command's flows report to: the one its settings name (`PREFECT_API_URL`, in the
environment or a Prefect profile), or else a temporary server this command starts and stops.

Prefect starts such a server itself (`SubprocessASGIServer`) when a flow first needs a client and no
API is named. That path imports `prefect.server.api.server`, the whole server's modules, into the
command's process, to run them in another: measured here, 2.2 s of CPU and 71 MB of PSS in every
command that runs a flow, an ingest's process included (which counts in `parse.memory_budget_mb`),
and the same import when an API was named and no server was needed. Its server also starts in the
command's process group (a terminal's Ctrl-C stopped it under the running flow) and nothing stops
it after a `kill -9` of the command. So the server is started here, before the flow, with the same
uvicorn command and environment Prefect's own method uses, through `python -m interleaf.children`:
in its own session, watching its parent (see `interleaf/children.py`). The command's Prefect
settings are then pointed at it (`PREFECT_API_URL`, Prefect's global settings refreshed), so
every thread of the flow finds it and Prefect never starts one of its own.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time

from interleaf.errors import InterleafError

_LOCK = threading.Lock()
_POLL_S = 0.1
_STOP_S = 5.0  # what uvicorn gets to end its lifespan after SIGTERM, as Prefect gives it
# uvicorn exits 3 when its port was taken meanwhile (Prefect's own server starter retries the same way)
_PORT_TAKEN = 3


def ensure_prefect_api() -> None:
    """Name a Prefect API for this command's flows, starting a temporary server when none is named
    (idempotent; a no-op when the settings name one, or when they forbid a temporary server: then
    Prefect's own error says so)."""
    from prefect.settings import get_current_settings

    with _LOCK:
        settings = get_current_settings()
        if settings.api.url or not settings.server.ephemeral.enabled:
            return
        url = _start(settings.server.ephemeral.startup_timeout_seconds)
        os.environ["PREFECT_API_URL"] = url
        from prefect.context import refresh_global_settings_context

        refresh_global_settings_context()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _uvicorn(port: int) -> subprocess.Popen[bytes]:
    import prefect
    from prefect.settings import get_current_settings

    command = [
        *("--app-dir", str(prefect.__module_path__.parent), "--factory"),
        *("prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port)),
        *("--log-level", "error", "--lifespan", "on"),
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "interleaf.children", str(os.getpid()), "uvicorn", *command],
        env={
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
            **get_current_settings().to_environment_variables(exclude_unset=True),
        },
        start_new_session=True,
    )


def _start(timeout_s: float) -> str:
    """Start the server and wait until it answers -> its API address."""
    import httpx

    port = _free_port()
    server = _uvicorn(port)
    atexit.register(_stop, server)
    deadline = time.monotonic() + timeout_s
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            exited = server.poll()
            if exited == _PORT_TAKEN:
                port = _free_port()
                server = _uvicorn(port)
                atexit.register(_stop, server)
                continue
            if exited is not None:
                break
            try:
                if client.get(f"http://127.0.0.1:{port}/api/health").status_code == 200:
                    return f"http://127.0.0.1:{port}/api"
            except httpx.TransportError:  # not listening yet
                pass
            time.sleep(_POLL_S)
    _stop(server)
    raise InterleafError(
        f"Prefect's temporary API server did not start within {timeout_s:.0f} s"
        + (f" (it exited {server.returncode})" if server.returncode is not None else "")
        + "; set PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, or point PREFECT_API_URL at a running server"
    )


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=_STOP_S)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
