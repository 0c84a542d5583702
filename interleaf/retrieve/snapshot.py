"""The loaded index kept on disk: one file per corpus, read in one go by every cold command.

Building the query-time index reads every document's quotes, descriptions, sections and index rows
and composes each quote's indexed text, tokens and vector matrix: work that grows with the corpus
and was done again by every `interleaf ask` and every server reload. The ingest builds it once
when it publishes (`flows.plans.open_index`), and whoever loads an index first looks here.

    <warehouse>/snapshots/<key>.index   b"interleaf-index 1\\n" + SHA-256 of the body + b"\\n" + body

The body is the `LoadedIndex` pickled (protocol 5). The key is the retrieve stage's corpus-side
upstream fingerprints (the corpus digest and every document stage's fingerprint; not the question
side's), the index configuration, the source of the modules that build an index, and the versions
of the libraries whose objects it holds: a file from other code is never read. A file whose digest does
not match (damaged on disk) is set aside and the index built again; the snapshot is a saving,
never the only copy of anything.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import mmap
import os
import pickle
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from interleaf.retrieve.loaded_index import LoadedIndex
from interleaf.stage import source_digest
from warehouse.store import Warehouse, atomic_write_bytes

FOLDER = "snapshots"
MAGIC = b"interleaf-index 1\n"
# the modules whose code shapes a loaded index (its corpus texts, retrievers, scopes)
BUILT_BY = ("interleaf.index", "interleaf.retrieve", "interleaf.structure", "interleaf.text", "interleaf.kinds")
LIBRARIES = ("numpy", "bm25s", "scipy", "pyarrow")
# snapshots kept per warehouse: the corpus now and a few before (another configuration, a corpus
# an ingest is replacing while a server still answers from the old one)
KEEP = 4


def snapshot_key(upstream_json: str) -> str:
    versions = ",".join(f"{name}={_version(name)}" for name in LIBRARIES)
    payload = f"{upstream_json}\n{source_digest(BUILT_BY)}\n{versions}\npython={sys.version_info[:2]}"
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def path_of(wh: Warehouse, key: str) -> Path:
    return wh.root / FOLDER / f"{key}.index"


def load(wh: Warehouse, key: str) -> LoadedIndex | None:
    """The index stored under `key`, or None (none stored, or one found damaged and set aside)."""
    path = path_of(wh, key)
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            index = _checked(data)
    except (FileNotFoundError, ValueError):  # none stored; an empty file (mmap refuses it)
        index = None
        if not path.exists():
            return None
    if index is None:
        with contextlib.suppress(OSError):
            wh.set_aside(path)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # the most recently used are the ones kept
    return index


def _checked(data: mmap.mmap) -> LoadedIndex | None:
    """The index `data` holds, or None when its digest does not match (damaged). Read from the
    mapped file: the page cache's bytes are not copied once more before unpickling."""
    head = len(MAGIC) + 65
    body = memoryview(data)[head:]
    # the digest is checked beside the unpickling, in a thread (hashlib lets go of the GIL over a
    # large buffer): on two cores the check costs no time, and what a damaged body unpickled to is
    # dropped before anyone sees it
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = pool.submit(lambda: hashlib.sha256(body).hexdigest().encode())
        try:
            index = _unpickled(body) if data[: len(MAGIC)] == MAGIC else None
        except Exception:  # damaged bytes unpickle into errors of any kind: the digest decides
            index = None
        sound = data[len(MAGIC) : head - 1] == digest.result()
    body.release()  # the map closes only once no view of it is left
    return index if sound and isinstance(index, LoadedIndex) else None


def save(wh: Warehouse, key: str, index: LoadedIndex) -> Path:
    """Store `index` under `key` (temporary name, then rename); older snapshots past KEEP go."""
    body = pickle.dumps(index, protocol=5)
    path = path_of(wh, key)
    atomic_write_bytes(path, MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    _prune(path.parent, keep=path)
    return path


def _unpickled(body: memoryview) -> object:
    """The pickled index, with the cyclic garbage collector paused: unpickling allocates a few
    hundred thousand objects, and the collections they set off took most of the load's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(body)
    finally:
        if enabled:
            gc.enable()


def _prune(folder: Path, keep: Path) -> None:
    found = []
    for p in folder.glob("*.index"):
        with contextlib.suppress(FileNotFoundError):
            found.append((p.stat().st_mtime, p))
    found.sort(reverse=True)
    for _, p in found[KEEP:]:
        if p != keep and time.time() - p.stat().st_mtime > 60:  # one loaded a moment ago may be in use
            p.unlink(missing_ok=True)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"
