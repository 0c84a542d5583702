"""The loaded index kept on disk: one file per corpus, mapped by every cold command.

Building the query-time index reads every document's quotes, descriptions, sections and index rows
and composes each quote's indexed text, tokens and vector matrix: work that grows with the corpus
and was done again by every `interleaf ask` and every server reload. The ingest builds it once
when it publishes (`flows.plans.open_index`), and whoever loads an index first looks here.

    <warehouse>/snapshots/<key>.index
        b"interleaf-index 2\n" + XXH3-128 of the rest (32 hex) + b"\n"
        + a JSON line: {"pickle": [offset, length], "buffers": [[offset, length], ...]}
        + the pickle, then each buffer at a 64-byte boundary

The index is pickled with protocol 5 and its large buffers out of band (PEP 574): the embedding
matrix, BM25's score arrays, the corpus's Arrow columns. Loading maps the file and hands the
pickle views of the mapping, so those arrays are the page cache's bytes, not copies; what is
decoded into Python objects is decoded when first used (`QuoteCorpus`, `LoadedIndex`,
`BM25Retriever` say what), so a load costs about the same at 50 documents as at 2,000.

Damage is caught by the digest over the whole file, computed in a thread beside the load while
the query encoders load; `LoadedIndex.ready()` waits for it before the first search. XXH3 reads
memory at several GB/s, so the check costs a few ms where SHA-256 cost tens (the digest is against
damage on disk, not against someone who can write the warehouse). A file whose layout does not
unpickle, or whose digest does not match, is set aside and the index built again; the snapshot is
a saving, never the only copy of anything. The file is replaced only by rename, never written in
place, so a mapping in use keeps reading the bytes it was checked against.

The key is the retrieve stage's corpus-side upstream fingerprints (the corpus digest and every
document stage's fingerprint; not the question side's), the index configuration, the source of the
modules that build an index, and the versions of the libraries whose objects it holds: a file from
other code is never read.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import mmap
import os
import pickle
import sys
import threading
import time
from concurrent.futures import Future
from importlib import metadata
from pathlib import Path

import xxhash

from interleaf.retrieve.loaded_index import LoadedIndex
from interleaf.stage import source_digest
from warehouse.store import Warehouse, atomic_write_bytes

FOLDER = "snapshots"
MAGIC = b"interleaf-index 2\n"
DIGEST_CHARS = 32  # XXH3-128, hex
ALIGN = 64  # each out-of-band buffer starts at a cache-line boundary (numpy's SIMD loops like it)
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
    """The index stored under `key`, or None (none stored, or one found damaged and set aside).
    The index's arrays are views of the mapped file: the mapping lives as long as they do. Its
    digest is checked beside: `LoadedIndex.ready()` says whether it matched."""
    path = path_of(wh, key)
    try:
        with path.open("rb") as file:
            data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return None
    except ValueError:  # an empty file (mmap refuses it)
        index = None
    else:
        index = _checked(data)
    if index is None:
        set_aside(wh, key)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # the most recently used are the ones kept
    return index


def set_aside(wh: Warehouse, key: str) -> None:
    """Move the snapshot stored under `key` out of the way (its digest did not match)."""
    with contextlib.suppress(OSError):
        wh.set_aside(path_of(wh, key))


def _checked(data: mmap.mmap) -> LoadedIndex | None:
    """The index `data` holds, its digest checked beside (`LoadedIndex.ready` waits for the check),
    or None when its layout does not hold together (damaged, or a file this code did not write)."""
    head = len(MAGIC) + DIGEST_CHARS + 1
    if data[: len(MAGIC)] != MAGIC:
        return None
    view = memoryview(data)
    try:
        layout_end = data.find(b"\n", head) + 1
        layout = json.loads(data[head:layout_end])
        start, length = layout["pickle"]
        buffers = [view[o : o + n] for o, n in layout["buffers"]]
        index = _unpickled(view[start : start + length], buffers)
    except Exception:  # damaged bytes unpickle into errors of any kind: no index from them
        index = None
    if not isinstance(index, LoadedIndex):
        view.release()
        return None
    index.attach_check(_digest_checked(view[head:], data[len(MAGIC) : head - 1]))
    view.release()  # the buffers handed to the pickle and the one being hashed are views of their own
    return index


def _digest_checked(body: memoryview, stored: bytes) -> Future[bool]:
    """Whether `body` hashes to `stored`, worked out in a thread: XXH3 lets go of the GIL, so on two
    cores the check runs while the query encoders load (`LoadedIndex.ready`)."""
    check: Future[bool] = Future()

    def run() -> None:
        try:
            check.set_result(xxhash.xxh3_128_hexdigest(body).encode() == stored)
        finally:
            body.release()

    threading.Thread(target=run, name="snapshot-digest", daemon=True).start()
    return check


def save(wh: Warehouse, key: str, index: LoadedIndex) -> Path:
    """Store `index` under `key` (temporary name, then rename); older snapshots past KEEP go."""
    out_of_band: list[pickle.PickleBuffer] = []
    body = pickle.dumps(index, protocol=5, buffer_callback=out_of_band.append)
    parts = [memoryview(body), *(b.raw() for b in out_of_band)]
    # the layout line names offsets from the file's start, so its own length must be known first:
    # offsets are computed for a line padded to a width that holds them (13 digits per number)
    head = len(MAGIC) + DIGEST_CHARS + 1
    width = 64 + 48 * len(parts)
    offset = _aligned(head + width)
    placed = []
    for part in parts:
        placed.append((offset, part.nbytes))
        offset = _aligned(offset + part.nbytes)
    layout = json.dumps({"pickle": list(placed[0]), "buffers": [list(x) for x in placed[1:]]}).encode()
    assert len(layout) < width, "the layout line outgrew its room"
    data = bytearray(offset)  # the file, filled in place: no copy of the buffers but this one
    data[head : head + len(layout) + 1] = layout + b"\n"
    for (at, n), part in zip(placed, parts, strict=True):
        data[at : at + n] = part.cast("B")
    data[:head] = MAGIC + xxhash.xxh3_128_hexdigest(memoryview(data)[head:]).encode() + b"\n"
    path = path_of(wh, key)
    atomic_write_bytes(path, data)
    _prune(path.parent, keep=path)
    return path


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


def _unpickled(body: memoryview, buffers: list[memoryview]) -> object:
    """The pickled index, with the cyclic garbage collector paused: unpickling allocates many
    objects, and the collections they set off would take much of the load's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(body, buffers=buffers)
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
