"""API keys: bearer tokens, kept only as hashes.

Keys come from a file of hashes (`name sha256:<hex>` per line; `interleaf serve --new-key NAME`
appends one and prints the key once) or from an environment variable holding keys themselves
(`name=key,other=key2`, for CI and containers), which are hashed as they are read: the server never
keeps a key, only its digest. A key is random (256 bits from `secrets`), so a plain SHA-256 cannot
be reversed by guessing; a slow password hash would only cost time on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from interleaf.errors import ConfigError
from interleaf.serve.config import ApiConfig

PREFIX = "il_"  # so a leaked key is recognisable in logs and by secret scanners
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_LINE = re.compile(r"(?P<name>\S+)\s+sha256:(?P<digest>[0-9a-f]{64})")


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class ApiKey:
    name: str  # who holds it: shown in logs and used for the rate limit, never the key itself
    digest: str


class KeyRing:
    """The keys the server accepts."""

    def __init__(self, keys: list[ApiKey]) -> None:
        self.keys = tuple(keys)

    def __len__(self) -> int:
        return len(self.keys)

    def identify(self, presented: str) -> ApiKey | None:
        """The key whose digest matches, compared in constant time against every key."""
        wanted = digest(presented)
        found = None
        for key in self.keys:
            if hmac.compare_digest(key.digest, wanted):
                found = key
        return found

    @classmethod
    def from_config(cls, config: ApiConfig, root: Path, environ: Mapping[str, str] | None = None) -> KeyRing:
        """Keys from the key file (`keys_file`, else `<warehouse>/api-keys`) and from `$keys_env`."""
        environ = os.environ if environ is None else environ
        keys = read_key_file(key_file(config, root))
        keys += keys_from_env(environ.get(config.keys_env, ""), config.keys_env)
        names = [k.name for k in keys]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigError(f"API key names must differ: {', '.join(repeated)} given more than once")
        return cls(keys)


class LiveKeys:
    """The configured keys, the key file read again whenever it changes: a key added with
    `--new-key` works at once, and a line deleted from the file revokes its key at once."""

    def __init__(self, config: ApiConfig, root: Path, environ: Mapping[str, str] | None = None) -> None:
        self.config, self.root, self.environ = config, root, environ
        self.path = key_file(config, root)
        self._stamp: tuple[int, int] | None = None
        self._ring = KeyRing.from_config(config, root, environ)
        self._stamp = self._file_stamp()

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    @property
    def ring(self) -> KeyRing:
        stamp = self._file_stamp()
        if stamp != self._stamp:
            self._ring, self._stamp = KeyRing.from_config(self.config, self.root, self.environ), stamp
        return self._ring


def key_file(config: ApiConfig, root: Path) -> Path:
    """Where the hashes are kept: `serve.api.keys_file`, else beside the warehouse's data."""
    return Path(config.keys_file).expanduser() if config.keys_file else root / "api-keys"


def read_key_file(path: Path) -> list[ApiKey]:
    if not path.exists():
        return []  # no key made yet: `interleaf serve --new-key NAME` creates the file
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the API key file: {exc}") from exc
    keys = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _LINE.fullmatch(text)
        if not match or not _NAME.fullmatch(match["name"]):
            raise ConfigError(f"{path} line {number}: not `name sha256:<64 hex digits>` (keys are stored hashed)")
        keys.append(ApiKey(match["name"], match["digest"]))
    return keys


def keys_from_env(value: str, variable: str) -> list[ApiKey]:
    keys = []
    for i, item in enumerate(part.strip() for part in value.split(",")):
        if not item:
            continue
        name, sep, key = item.partition("=")
        if not sep:
            name, key = f"env-{i + 1}", item
        if len(key) < 16 or not _NAME.fullmatch(name):
            raise ConfigError(f"${variable}: item {i + 1} is not `name=key` with a key of 16 or more characters")
        keys.append(ApiKey(name, digest(key)))
    return keys


def add_key(path: Path, name: str) -> str:
    """A new key for `name`: its hash appended to `path` (created readable by its owner only); the
    key itself is returned to be shown once."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"key name {name!r}: use 1-64 letters, digits or . _ @ -")
    if any(k.name == name for k in read_key_file(path)):
        raise ConfigError(f"{path} already holds a key named {name!r}")
    key = new_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(f"{name} sha256:{digest(key)}\n")
    return key
