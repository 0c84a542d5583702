"""The Prefect API a command's flows report to: the one its settings name (`PREFECT_API_URL`, in the
environment or a Prefect profile), or else a temporary server this command starts and stops.

Prefect starts such a server itself (`SubprocessASGIServer`) when a flow first needs a client and no
API is named. That path imports `prefect.server.api.server`, the whole server's modules, into the
command's process, to run them in another: measured here, 2.2 s of CPU and 71 MB of PSS in every
command that runs a flow, an ingest's process included (which counts in `parse.memory_budget_mb`),
and the same import when an API was named and no server was needed. Its server also starts in the
command's process group (a terminal's Ctrl-C stopped it under the running flow) and nothing stops
it after a `kill -9` of the command. So the server is started here, before the flow, with the same
uvicorn command and environment Prefect's own method uses, through `python -m interleaf.runtime.children`:
in its own session, watching its parent (see `interleaf/runtime/children.py`). The command's Prefect
settings are then pointed at it (`PREFECT_API_URL`, Prefect's global settings refreshed), so
every thread of the flow finds it and Prefect never starts one of its own. `make serve`'s server
(flows/serve.py) is started and stopped the same way, with its UI and all of Prefect's services.

What the server prints (Prefect's logging, uvicorn's, SQLAlchemy's pool) goes to a log file of its
own in the Prefect home (`interleaf-server-logs/`), never to the command's terminal: a server
stopped under a command reports what the stop cut short (a rollback cancelled as its client went
away, as a traceback), which is no news to a user who asked for the stop, and it arrived after the
command's last line, even after its exit. While the command runs normally, the error records of
that file are copied to its stderr under a line naming the file; once a stop has begun (a signal,
the command's end) nothing more is, and a server that ended by itself is reported with its file.

The server is stopped in the order that lets its database pool close: SIGTERM, on which uvicorn
stops accepting, lets the requests in flight end (at most DRAIN_S, then cancels them) and runs the
app's shutdown (Prefect's services stop); after that, still inside the shutdown, `create_app`'s
wrapper disposes of the database engines, so their connections roll back and close while nothing
cancels them, and only then does the process end. The command waits STOP_S for all of it, then
kills the server, so a stop still ends within the interrupt's promise.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import IO, Any

from interleaf.errors import InterleafError
from interleaf.runtime import interrupt

_LOCK = threading.Lock()
_POLL_S = 0.1
STOP_S = 5.0  # what the server gets from SIGTERM to its exit, its pool's closing included, before a kill
DRAIN_S = 2  # of that, what requests in flight get to end (uvicorn takes whole seconds)
# uvicorn exits 3 when its port was taken meanwhile (Prefect's own server starter retries the same way)
_PORT_TAKEN = 3
LOGS = "interleaf-server-logs"  # in the Prefect home
_LOGS_KEPT = 20  # the newest logs of that folder; older ones are removed as a server starts
_COPY_S = 0.5  # how often the command reads its server's new log lines while it runs
TEMPORARY = "Prefect's temporary server"

# A record's first line as Prefect's formatter writes it ("15:13:13.864 | ERROR   | name - ..."), or
# as uvicorn's and Python's default ones do ("ERROR:    ..."); the lines up to the next such line
# (a traceback) are the record's.
_RECORD = re.compile(
    r"^(?:\d\d:\d\d:\d\d\.\d+ \| (?P<prefect>[A-Z]+) *\||(?P<plain>DEBUG|INFO|WARNING|ERROR|CRITICAL):)"
)
_ERRORS = {"ERROR", "CRITICAL"}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def ensure_prefect_api() -> None:
    """Name a Prefect API for this command's flows, starting a temporary server when none is named
    (idempotent; a no-op when the settings name one, or when they forbid a temporary server: then
    Prefect's own error says so)."""
    from prefect.settings import get_current_settings

    with _LOCK:
        settings = get_current_settings()
        if settings.api.url or not settings.server.ephemeral.enabled:
            return
        server = PrefectServer(TEMPORARY)
        server.start(
            port=None,
            timeout_s=settings.server.ephemeral.startup_timeout_seconds,
            env={"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"},
        )
        use_api(server.url)


def use_api(url: str) -> None:
    """Point this process's Prefect settings at the API `url` (every thread's, those read already too)."""
    os.environ["PREFECT_API_URL"] = url
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()


class ServerLog:
    """A server's output file, whose error records are copied to this command's stderr: from a
    thread once the server is up (`follow`), until `quiet` or a signal (`interrupt.say` prints
    nothing once a stop was asked for)."""

    def __init__(self, path: Path | None, name: str) -> None:
        self.path = path
        self._name = name
        self._reader = path.open("rb") if path is not None else None
        self._pending = b""
        self._in_error = False
        self._named = False
        self._lock = threading.Lock()
        self._quiet = threading.Event()

    @classmethod
    def create(cls, home: Path, name: str) -> ServerLog:
        """A new log in `home`'s LOGS folder (its older logs past _LOGS_KEPT removed). One file a
        server: two commands of one home run at once, and each copies its own server's errors."""
        try:
            folder = home / LOGS
            folder.mkdir(parents=True, exist_ok=True)
            for old in sorted(folder.glob("*.log"))[: -(_LOGS_KEPT - 1)]:
                with contextlib.suppress(OSError):  # removed meanwhile by another command
                    old.unlink()
            path = folder / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
            path.touch()
            return cls(path, name)
        except OSError:  # an unwritable home: the server's own start says what is wrong with it
            return cls(None, name)

    def where(self) -> str:
        return f"its log: {self.path}" if self.path is not None else "its output was not kept"

    @contextlib.contextmanager
    def writer(self) -> Iterator[IO[bytes] | int]:
        """The file a server's stdout and stderr are (the command's copy closed once it started)."""
        if self.path is None:
            yield subprocess.DEVNULL
            return
        with self.path.open("ab") as out:
            yield out

    def copy_errors(self) -> None:
        """Copy the error records written since the last call to stderr, unless quiet."""
        with self._lock:
            if self._reader is None or self._quiet.is_set():
                return
            chunk = self._pending + self._reader.read()
            complete, _, self._pending = chunk.rpartition(b"\n")
            errors = [line for line in complete.decode(errors="replace").splitlines() if self._error(line)]
            if not errors:
                return
            head = [] if self._named else [f"{self._name} logged an error ({self.where()}):"]
            if interrupt.say("\n".join([*head, *errors])):
                self._named = True
            else:  # a stop was asked for: what the server logs from now on is about it
                self._quiet.set()

    def follow(self) -> None:
        """Copy the error records as they come, from a thread."""
        if self._reader is not None:
            threading.Thread(target=self._follow, name="prefect-server-log", daemon=True).start()

    def skip(self) -> None:
        """Copy nothing of what was written so far (a start that was retried: not news)."""
        with self._lock:
            if self._reader is not None and not self._quiet.is_set():
                self._reader.seek(0, os.SEEK_END)
                self._pending, self._in_error = b"", False

    def quiet(self) -> None:
        """Copy nothing more (the stop of its server began); waits for a copy under way."""
        with self._lock:
            self._quiet.set()
            if self._reader is not None:
                self._reader.close()

    def _error(self, line: str) -> bool:
        if match := _RECORD.match(line):
            self._in_error = (match["prefect"] or match["plain"]) in _ERRORS
        elif line.startswith("Traceback (most recent call last)") and not self._in_error:
            self._in_error = True  # an exception nothing logged: the server's end
        return self._in_error

    def _follow(self) -> None:
        while not self._quiet.wait(_COPY_S):
            self.copy_errors()


class PrefectServer:
    """A Prefect API server process of this command (see the module's docstring): `start`, `stop`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.url = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.log: ServerLog | None = None

    def start(self, *, host: str = "127.0.0.1", port: int | None, timeout_s: float, env: dict[str, str]) -> str:
        """Start the server and wait until it answers -> its API address. `port`: None for any free
        one (a port taken meanwhile is replaced); `env`: the server's settings beyond the command's."""
        import httpx
        from prefect.settings import get_current_settings

        settings = get_current_settings()
        self.log = log = ServerLog.create(Path(settings.home).expanduser(), self.name)
        env = {**os.environ, **env, **settings.to_environment_variables(exclude_unset=True)}
        chosen = port or _free_port()
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        with log.writer() as out:
            self.process = _uvicorn(host, chosen, env, out)
            with httpx.Client() as client:
                while time.monotonic() < deadline:
                    exited = self.process.poll()
                    if exited == _PORT_TAKEN and port is None:
                        log.skip()  # what it said (its port taken) is no news once another one starts
                        chosen = _free_port()
                        self.process = _uvicorn(host, chosen, env, out)
                        continue
                    if exited is not None:
                        break
                    try:
                        if client.get(f"http://{host}:{chosen}/api/health").status_code == 200:
                            self.url = f"http://{host}:{chosen}/api"
                            log.follow()
                            return self.url
                    except httpx.TransportError:  # not listening yet
                        pass
                    time.sleep(_POLL_S)
        process, self.process = self.process, None
        exited = process.poll()
        log.copy_errors()  # why it did not start, when it says
        _terminate(process)
        log.quiet()
        raise InterleafError(
            f"{self.name} did not start within {timeout_s:.0f} s"
            + (f" (it exited {exited})" if exited is not None else "")
            + f"; {log.where()}"
            + (
                "; set PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, or point PREFECT_API_URL at a running server"
                if self.name == TEMPORARY
                else ""
            )
        )

    def stop(self) -> None:
        """Stop the server (idempotent): what it logged while the command ran normally is copied first,
        nothing after; a server that ended by itself meanwhile is reported, with its log."""
        process, log, self.process = self.process, self.log, None
        if process is None or log is None:
            return
        ended = process.poll()
        log.copy_errors()
        if ended is not None and not interrupt.requested():
            interrupt.say(f"{self.name} ended while the command ran (exit {ended}); {log.where()}")
        log.quiet()
        _terminate(process)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _uvicorn(host: str, port: int, env: dict[str, str], out: IO[bytes] | int) -> subprocess.Popen[bytes]:
    command = [
        *("--factory", "interleaf.runtime.prefect_server:create_app", "--host", host, "--port", str(port)),
        *("--log-level", "error", "--lifespan", "on", "--timeout-graceful-shutdown", str(DRAIN_S)),
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "interleaf.runtime.children", str(os.getpid()), "uvicorn", *command],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        start_new_session=True,
    )


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# -- in the server's process -------------------------------------------------------------------


def create_app() -> Any:
    """uvicorn's factory, in the server's process: Prefect's app (as `prefect.server.api.server:
    create_app` makes it for uvicorn), its database engines disposed at the end of its shutdown."""
    from prefect.server.api.server import create_app as prefect_app

    return PoolClosedAtShutdown(prefect_app())


class PoolClosedAtShutdown:
    """An ASGI app whose lifespan's shutdown, once the app's own has ended (its services stopped),
    disposes of Prefect's database engines before uvicorn is told it is complete: their pooled
    connections roll back and close now, not cancelled as the process ends."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def send_after_closing(message: Message) -> None:
            if message["type"] in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
                await dispose_engines()
            await send(message)

        await self.app(scope, receive, send_after_closing)


async def dispose_engines() -> None:
    """Dispose of the engines Prefect made on this event loop (its own disposal waits for the loop's
    close, which a server ended by its signal never reaches)."""
    from prefect.server.database import configurations

    engines = getattr(configurations, "ENGINES", {})
    loop = asyncio.get_running_loop()
    for key in [key for key in engines if isinstance(key, tuple) and key and key[0] is loop]:
        try:
            await engines.pop(key).dispose()
        except Exception:  # to the server's log; the process ends all the same
            logging.getLogger("interleaf.runtime.prefect_server").exception("a database engine was not disposed of")
