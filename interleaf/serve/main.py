"""`interleaf serve`: run the server with uvicorn; `interleaf serve --new-key NAME`: make a key."""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

from interleaf.config import Settings
from interleaf.serve.keys import LiveKeys, add_key, key_file


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_key(root: Path, settings: Settings, name: str) -> tuple[str, Path]:
    path = key_file(settings.serve.api, root)
    return add_key(path, name), path


def serve(root: Path, settings: Settings, host: str | None, port: int | None, access_log: bool = True) -> None:
    import uvicorn

    from interleaf.serve.app import create_app

    api = settings.serve.api
    host, port = host or api.host, port or api.port
    keys = LiveKeys(api, root).ring  # also checks the key file and $keys_env before starting
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log = logging.getLogger("interleaf.serve")
    if not is_loopback(host):
        log.warning(
            "listening on %s, reachable from other machines; reading is %s%s",
            host,
            api.read_access,
            "" if api.read_access == "keyed" else " (set serve.api.read_access=keyed to require keys)",
        )
    log.info("%d API keys; uploads %s", len(keys), "need one of them" if keys else "are off until a key exists")
    app = create_app(root, settings)
    uvicorn.run(app, host=host, port=port, access_log=access_log, log_level="info", timeout_graceful_shutdown=5)
