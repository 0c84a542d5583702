"""`python -m benchmarks.faults.enospc ROOT PATTERN -- ARGS...`: `interleaf ARGS` with a disk that
fills up at one write, for where no small filesystem can be mounted (and for the one write a fill
level cannot single out, the publish).

Files opened for writing under ROOT go through Python's `io.open` (the warehouse's atomic writes,
its images, caches, ledger and published state). The first whose path relative to ROOT (a
temporary name counted as the file it becomes) matches PATTERN (fnmatch) writes half its data and
fails with OSError(ENOSPC), as a full disk fails; from then on every write under ROOT fails the
same way, as on a disk that stays full. DuckDB's own writes (catalog.duckdb) are not seen here.
"""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

TEMPORARY = re.compile(r"^\.(?P<name>.+)\.tmp-\d+-[0-9a-f]+$")


def warehouse_relpath(root: Path, file: object) -> str | None:
    """`file`'s path relative to `root` (resolved), a temporary counted as the file it becomes;
    None for a file descriptor or a path outside `root`."""
    try:
        path = Path(os.fspath(file)).resolve()  # type: ignore[arg-type]
    except TypeError:  # a file descriptor
        return None
    if root not in path.parents:
        return None
    found = TEMPORARY.match(path.name)
    return str(path.relative_to(root).with_name(found["name"] if found else path.name))


class FullDisk:
    def __init__(self, root: Path, pattern: str) -> None:
        self.root, self.pattern = root.resolve(), pattern
        self.full = False
        self._lock = threading.Lock()

    def relpath(self, file: object) -> str | None:
        return warehouse_relpath(self.root, file)

    def hits(self, relpath: str) -> bool:
        with self._lock:
            if not self.full and fnmatch.fnmatch(relpath, self.pattern):
                self.full = True
            return self.full


class FailingWrites(io.RawIOBase):
    """A file whose writes fail for want of room (the first one after writing half its data)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: Any) -> int:
        self._handle.write(bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._handle.fileno()

    def close(self) -> None:
        self._handle.close()
        super().close()


def install(disk: FullDisk) -> None:
    real_open = io.open

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if any(c in mode for c in "wax+") and (rel := disk.relpath(file)) is not None and disk.hits(rel):
            return FailingWrites(handle)
        return handle

    io.open = open_  # pathlib's Path.open calls io.open


def main(argv: list[str]) -> None:
    root, pattern, sep, *args = argv
    if sep != "--":
        raise SystemExit("usage: python -m benchmarks.faults.enospc ROOT PATTERN -- ARGS...")
    install(FullDisk(Path(root), pattern))
    from interleaf.cli import run

    sys.argv = ["interleaf", *args]
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
