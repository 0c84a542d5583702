"""Seeded damage to a PDF's bytes, each kind aimed at one part of the file: anywhere (byte flips,
truncation), the cross-reference table (its offsets, `startxref`), or a stream (its bytes, its
/Length). Every function takes the file's bytes and a `random.Random` and returns new bytes."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pymupdf

_STREAM = re.compile(rb"stream\r?\n")
_LENGTH = re.compile(rb"/Length (\d+)(?! \d+ R)")
_XREF_ENTRY = re.compile(rb"(\d{10}) (\d{5}) n")
_STARTXREF = re.compile(rb"startxref\s+(\d+)")


def byte_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 32)):
        at = rng.randrange(16, len(out))  # past the header: a file without one is only "not a PDF"
        out[at] ^= rng.randint(1, 255)
    return bytes(out)


def truncation(data: bytes, rng: random.Random) -> bytes:
    return data[: int(len(data) * rng.uniform(0.05, 0.98))]


def xref_offsets(data: bytes, rng: random.Random) -> bytes:
    """Some entries of the last xref table point at the wrong bytes."""
    table = data.rfind(b"\nxref")
    entries = list(_XREF_ENTRY.finditer(data, table if table >= 0 else 0))
    if not entries:
        return byte_flips(data, rng)
    out = bytearray(data)
    for entry in rng.sample(entries, k=rng.randint(1, len(entries))):
        out[entry.start(1) : entry.end(1)] = b"%010d" % rng.randrange(len(data) * 2)
    return bytes(out)


def startxref(data: bytes, rng: random.Random) -> bytes:
    """`startxref` points elsewhere (or at no number at all): the reader must rebuild the xref."""
    found = list(_STARTXREF.finditer(data))
    if not found:
        return truncation(data, rng)
    last = found[-1]
    value = rng.choice([b"0", b"%d" % rng.randrange(len(data)), b"99999999999", b"-1", b"xref"])
    return data[: last.start(1)] + value + data[last.end(1) :]


def _streams(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each stream's bytes: from after `stream` to before `endstream`."""
    spans = []
    for match in _STREAM.finditer(data):
        end = data.find(b"endstream", match.end())
        if end > match.end():
            spans.append((match.end(), end))
    return spans


def stream_bytes(data: bytes, rng: random.Random) -> bytes:
    """Bytes inside one stream overwritten: a content stream's operators, or a Flate stream that
    no longer inflates."""
    spans = _streams(data)
    if not spans:
        return byte_flips(data, rng)
    start, end = rng.choice(spans)
    out = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        out[rng.randrange(start, end)] = rng.randrange(256)
    return bytes(out)


def stream_length(data: bytes, rng: random.Random) -> bytes:
    """One stream's /Length says too little, too much, or something absurd."""
    found = list(_LENGTH.finditer(data))
    if not found:
        return stream_bytes(data, rng)
    length = rng.choice(found)
    n = int(length.group(1))
    wrong = rng.choice([0, n // 2, n + rng.randint(1, 4096), 2 * n + 7, 10**12])
    return data[: length.start(1)] + b"%d" % wrong + data[length.end(1) :]


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "byte-flips": byte_flips,
    "truncation": truncation,
    "xref-offsets": xref_offsets,
    "startxref": startxref,
    "stream-bytes": stream_bytes,
    "stream-length": stream_length,
}


def extract(source: pymupdf.Document, first: int, pages: int, compress: bool) -> bytes:
    """Pages [first, first + pages) as a file of their own, with a classic xref table (the damage
    above aims at one) and its streams Flate-compressed or plain."""
    out = pymupdf.open()
    out.insert_pdf(source, from_page=first, to_page=min(first + pages, source.page_count) - 1)
    data = out.tobytes(garbage=3, deflate=compress, use_objstms=0)
    out.close()
    return data
