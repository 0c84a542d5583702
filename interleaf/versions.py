"""Installed releases of what a stage runs, for its fingerprint: upgrading RapidOCR or MinerU
changes the output a stage writes, so it must change the name it is stored under."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from importlib import metadata


@functools.cache
def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def package_versions(names: Iterable[str]) -> dict[str, str]:
    return {n: package_version(n) for n in names}
