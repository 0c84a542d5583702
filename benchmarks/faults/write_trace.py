"""`python -m benchmarks.faults.write_trace ROOT JOURNAL -- ARGS...`: `interleaf ARGS` with every
file the command's process publishes or deletes under ROOT written to JOURNAL, one JSON line each:
`{"at": time.monotonic(), "op": "write" | "delete", "path": relative to ROOT, "size": bytes}`.

The disk-full fault sizes its tmpfs from when each file of a reference ingest appears and goes. A
warehouse polled every few milliseconds misses a file that lives shorter than that: a run of
pages' checkpoint (`page_results`, which holds its crops' bytes) lives from the run's end to the
document's commit, a few milliseconds once parse has nothing left to read at the commit. Counted
as never there, it made the crop case's room too small by its size, and the case ran out at the
checkpoint instead of the crop. The warehouse's writes all end in `os.replace` (a temporary
renamed, `atomic_write_bytes`) and its deletions go through `os.unlink` (`Path.unlink`), in the
command's process, so both are seen here whatever their timing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.faults.enospc import warehouse_relpath


class Journal:
    def __init__(self, root: Path, journal: Path) -> None:
        self.root = root.resolve()
        self._handle = journal.open("a", buffering=1)
        self._lock = threading.Lock()

    def note(self, op: str, file: Any, size: int) -> None:
        if (path := warehouse_relpath(self.root, file)) is not None:
            line = {"at": time.monotonic(), "op": op, "path": path, "size": size}
            with self._lock:
                self._handle.write(json.dumps(line) + "\n")


def install(journal: Journal) -> None:
    real_replace, real_unlink = os.replace, os.unlink

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        real_replace(src, dst, *args, **kwargs)
        journal.note("write", dst, os.stat(dst).st_size)

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        real_unlink(path, *args, **kwargs)
        journal.note("delete", path, 0)

    os.replace, os.unlink = replace, unlink


def read(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def main(argv: list[str]) -> None:
    root, journal, sep, *args = argv
    if sep != "--":
        raise SystemExit("usage: python -m benchmarks.faults.write_trace ROOT JOURNAL -- ARGS...")
    install(Journal(Path(root), Path(journal)))
    from interleaf.cli import run

    sys.argv = ["interleaf", *args]
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
