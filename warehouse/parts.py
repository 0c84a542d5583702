"""Parquet parts that carry their own SHA-256, so a part damaged on disk is found when it is read.

Parquet's own page checksums cover data pages only: a flipped bit in the footer can change what
is read without any error (found by flipping every bit position of a quotes part: one flip in the
footer turned a caption into null). So each part's footer holds a digest of the whole file, taken
with the digest's own 64 characters zeroed: `seal` writes it, `open_sealed` checks it.

A part written before sealing existed has no digest; it is checked by decoding it alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from interleaf.errors import CorruptPartError

DIGEST_KEY = b"interleaf.sha256"
MARK = b"interleaf-sha256:"  # the value starts with it, so the digest is found in the file's bytes
ZEROS = b"0" * 64


def seal(table: pa.Table) -> bytes:
    """`table` as Parquet bytes (zstd) whose footer holds the SHA-256 of the file."""
    metadata = {**(table.schema.metadata or {}), DIGEST_KEY: MARK + ZEROS}
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(metadata), sink, compression="zstd")
    placeholder = sink.getvalue().to_pybytes()
    at = _digest_at(placeholder)
    if at is None or placeholder[at : at + 64] != ZEROS:  # the writer kept the value elsewhere
        raise RuntimeError("the digest placeholder is not where a sealed part keeps it")
    digest = hashlib.sha256(placeholder).hexdigest().encode()
    return placeholder[:at] + digest + placeholder[at + 64 :]


def check(data: bytes, path: Path) -> None:
    """Raise CorruptPartError when `data` is not the whole file `seal` wrote (or, unsealed, does
    not decode as Parquet)."""
    at = _digest_at(data)
    if at is None:
        if DIGEST_KEY in data[-65536:]:  # sealed, but the digest's own bytes are damaged
            raise CorruptPartError(path, "its digest is damaged")
        _decode(data, None, path)  # written before parts were sealed: decoding is the only check
        return
    stored = data[at : at + 64]
    actual = hashlib.sha256(data[:at] + ZEROS + data[at + 64 :]).hexdigest().encode()
    if stored != actual:
        raise CorruptPartError(path, f"its bytes do not match its digest ({len(data)} bytes read)")


def open_sealed(path: Path, schema: pa.Schema) -> pa.Table:
    """The part at `path`, checked whole, as `schema`; CorruptPartError names the file and why."""
    data = path.read_bytes()
    check(data, path)
    return _decode(data, schema, path)


def _decode(data: bytes, schema: pa.Schema | None, path: Path) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(_arrow_owned(data)), schema=schema)
    except (pa.ArrowException, OSError) as exc:  # Arrow's IO errors are OSErrors too
        raise CorruptPartError(path, f"not readable as Parquet ({type(exc).__name__}: {exc})") from exc
    return table.replace_schema_metadata(None) if schema is None else table


def _arrow_owned(data: bytes) -> pa.Buffer:
    """A copy of `data` in memory Arrow owns. `read_table` scans on Arrow's threads, and one of
    them may drop the scan's last reference to its input after `read_table` has returned. Over
    Python's `bytes`, that needs the GIL: when the command was already exiting, the thread was
    ended inside a destructor and the process aborted ("terminate called without an active
    exception", exit -6 after `interleaf ask` had printed its answer; seen in a core dump)."""
    buffer = pa.allocate_buffer(len(data))
    with pa.FixedSizeBufferWriter(buffer) as writer:
        writer.write(data)
    return buffer


def _digest_at(data: bytes) -> int | None:
    """Where the digest's 64 hex characters start; None when the file has no digest mark."""
    found = data.rfind(MARK)
    if found < 0 or found + len(MARK) + 64 > len(data):
        return None
    return found + len(MARK)
