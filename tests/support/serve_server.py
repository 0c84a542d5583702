"""Interleaf's own server on loopback for the serve tests: uvicorn in a thread, over a copy of an
ingested warehouse (uploads and stored answers stay out of the session's shared one)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from interleaf.config import load_settings
from interleaf.serve.app import create_app
from interleaf.serve.keys import add_key


@dataclass
class RunningServer:
    url: str
    root: Path
    key: str  # a valid API key
    keys_file: Path  # where its hash is kept

    def client(self, key: str | None = None, timeout: float = 300.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)


def copy_warehouse(source: Path, folder: Path) -> Path:
    """The warehouse's files (not its temporaries) copied into `folder`/warehouse."""
    root = folder / "warehouse"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".*.tmp-*", ".lock"))
    return root


@contextmanager
def serving(root: Path, *overrides: str, key_name: str | None = "tester") -> Iterator[RunningServer]:
    """`interleaf serve` over `root` on a free loopback port, with `--set` style overrides."""
    keys_file = root.parent / f"api-keys-{uuid.uuid4().hex[:8]}"  # each server its own keys
    settings = load_settings(None, [*overrides, f"serve.api.keys_file={keys_file}"])
    key = add_key(keys_file, key_name) if key_name else ""
    app = create_app(root, settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # warm-up loads the index first
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield RunningServer(f"http://127.0.0.1:{port}", root, key, keys_file)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        keys_file.unlink(missing_ok=True)


def closed_port() -> int:
    """A loopback port nothing listens on (a model server that is down)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
