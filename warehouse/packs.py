"""Packs: many small parts of one table and fingerprint merged into a few large files.

A part is written as its own file (`<table>/<fingerprint>/<part>.parquet`), one per document and
stage, so writers never share a file. Read one by one, 10,000 documents are 100,000 files: a cold
question opened every one of them (about 1 ms each to open and check). Compaction merges the
published parts of a folder into packs, as Delta Lake's OPTIMIZE or Iceberg's rewrite_data_files
do::

    <table>/<fingerprint>/_packs/<digest>.parquet   the parts' rows, sorted by part, plus `_part`
    <table>/<fingerprint>/_packs/manifest.json      part -> the pack that holds it

A part is then either its own file or rows of a pack, and its own file wins: a part written again
after it was packed (a forced rerun) is read from its new file, and its rows in the pack are dead
until the next compaction rewrites the pack. Nothing is lost on a kill at any point: packs are
written (temporary name, rename) before the manifest names them, and the manifest is replaced
whole before the packed files are removed. A kill before the manifest leaves a pack no manifest
names (`gc` frees it); a kill after it leaves parts that are both a file and packed rows, which
read the same.

Seals: a pack is sealed like a part and checked whole (its SHA-256 over every byte) when a process
reads it, so a read pays for the bytes it reads (about a millisecond per megabyte here), not a
millisecond per part: a cold question over thousands of documents checks a handful of packs in
tens of milliseconds and catches a flipped bit anywhere in them. The server's part cache keeps a
pack checked once for as long as its file is the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from interleaf.errors import CorruptPartError
from warehouse import parts as sealed
from warehouse import schemas

PACKS = "_packs"
MANIFEST = "manifest.json"
PART_COLUMN = "_part"

# A pack's size: large enough that a table of 10,000 documents is a handful of files (quotes of
# one page are ~10 KB in Parquet, so a pack holds thousands of documents), small enough that one
# rewrite (a pack with dead rows, or the small packs merged with new parts) reads and writes at
# most this much, and that checking its digest costs well under a second.
TARGET_BYTES = 64 << 20
# A folder is compacted when it holds this many loose parts: below it, opening the loose parts
# costs a few tens of milliseconds per table (about 1 ms each), less than a pack's rewrite.
MIN_LOOSE = 32
# A read of at most this many named parts looks for their files one by one; a larger one lists the
# folder (compaction keeps it short) instead of asking for thousands of names that are packed.
FEW = 64


def pack_schema(table: str) -> pa.Schema:
    return schemas.schema_of(table).append(pa.field(PART_COLUMN, pa.string(), nullable=False))


def folder_of(root: Path, table: str, fingerprint: str) -> Path:
    return root / table / fingerprint / PACKS


# the manifests read by this process, by (path, inode, size, mtime): re-read only when replaced
_MANIFESTS: dict[Path, tuple[tuple[int, int, int], dict[str, dict]]] = {}


def _read_manifest(folder: Path) -> dict[str, dict]:
    """The manifest under `folder` (a `_packs` folder): `parts` (part -> pack file name) and
    `held` (pack file name -> every part it has rows of, live or dead); empty when none."""
    path = folder / MANIFEST
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {"parts": {}, "held": {}}
    key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    cached = _MANIFESTS.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        raw = json.loads(path.read_bytes())
        found = {"parts": dict(raw["parts"]), "held": dict(raw.get("held", {}))}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptPartError(path, f"not a pack manifest ({type(exc).__name__}: {exc})") from exc
    _MANIFESTS[path] = (key, found)
    return found


def manifest(folder: Path) -> dict[str, str]:
    """part -> pack file name, for the packs under `folder` (a `_packs` folder); {} when none."""
    return _read_manifest(folder)["parts"]


def held(folder: Path) -> dict[str, list[str]]:
    """pack file name -> the parts it has rows of, as its compaction wrote it."""
    return _read_manifest(folder)["held"]


def manifest_bytes(parts: Mapping[str, str], held: Mapping[str, Iterable[str]]) -> bytes:
    """A manifest naming `parts`; `held` is kept for the packs still named."""
    named = set(parts.values())
    kept = {pack: sorted(names) for pack, names in sorted(held.items()) if pack in named}
    return json.dumps({"parts": dict(sorted(parts.items())), "held": kept}, indent=0).encode()


@dataclass
class PackedRead:
    """Which rows of a folder a read takes: own files, and per pack the parts taken from it."""

    files: list[Path] = field(default_factory=list)
    packs: dict[Path, set[str]] = field(default_factory=dict)

    @property
    def paths(self) -> list[Path]:
        return [*self.files, *self.packs]


def locate(root: Path, table: str, fingerprint: str, wanted: Iterable[str] | None) -> PackedRead:
    """Where the parts `wanted` (None: every part stored) of a folder are: a part's own file when
    it has one, else the pack the manifest names. A wanted part stored nowhere is left out."""
    folder = root / table / fingerprint
    packed = manifest(folder / PACKS)
    names = set(packed) if wanted is None else set(wanted)
    if wanted is None or len(names) > FEW:
        own = {p.stem: p for p in folder.glob("*.parquet")}
        names |= set(own) if wanted is None else set()
    else:  # a unit's read during an ingest: no listing of a folder of thousands of loose parts
        own = {n: p for n in names if (p := folder / f"{n}.parquet").exists()}
    found = PackedRead()
    by_pack: dict[str, set[str]] = {}
    for name in sorted(names):
        if name in own:
            found.files.append(own[name])
        elif name in packed:
            by_pack.setdefault(packed[name], set()).add(name)
    found.packs = {folder / PACKS / pack: taken for pack, taken in sorted(by_pack.items())}
    return found


def stored_parts(root: Path, table: str, fingerprint: str) -> set[str]:
    """Every part of a folder, own file or packed."""
    folder = root / table / fingerprint
    return {p.stem for p in folder.glob("*.parquet")} | set(manifest(folder / PACKS))


def rows_of(pack: pa.Table, names: set[str]) -> dict[str, pa.Table]:
    """The rows of each part of `names` in a pack read whole (its rows are sorted by part), without
    the `_part` column."""
    column = pack.column(PART_COLUMN)
    taken = pack.filter(pc.is_in(column, pa.array(sorted(names), pa.string())))
    part_of = taken.column(PART_COLUMN).to_pylist()
    body = taken.drop_columns([PART_COLUMN])
    out: dict[str, pa.Table] = {}
    start = 0
    for i in range(1, len(part_of) + 1):
        if i == len(part_of) or part_of[i] != part_of[start]:
            out[part_of[start]] = body.slice(start, i - start)
            start = i
    return out


def pack_bytes(table: str, parts: Mapping[str, pa.Table]) -> bytes:
    """The sealed pack of `parts` (name -> rows as declared), rows sorted by part."""
    names = sorted(parts)
    body = schemas.check(table, pa.concat_tables([parts[n] for n in names])) if names else schemas.empty(table)
    tags = pa.array([n for n in names for _ in range(parts[n].num_rows)], pa.string())
    return sealed.seal(body.append_column(pa.field(PART_COLUMN, pa.string(), nullable=False), tags))


def pack_name(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24] + ".parquet"


def without_parts(parts: Mapping[str, str], gone: Iterable[str]) -> dict[str, str]:
    gone = set(gone)
    return {k: v for k, v in parts.items() if k not in gone}


def live_parts(folder: Path) -> dict[str, set[str]]:
    """pack file name -> the parts read from it (named by the manifest, with no own file)."""
    own = {p.stem for p in folder.parent.glob("*.parquet")}
    out: dict[str, set[str]] = {}
    for part, pack in manifest(folder).items():
        if part not in own:
            out.setdefault(pack, set()).add(part)
    return out


def unreferenced_packs(folder: Path) -> list[Path]:
    """Pack files no live part is read from: left by a kill before their manifest, or emptied."""
    live = live_parts(folder)
    with contextlib.suppress(FileNotFoundError):
        return sorted(p for p in folder.glob("*.parquet") if p.name not in live)
    return []


_HELD: dict[Path, frozenset[str]] = {}  # a pack's name is its digest: what it holds never changes


def parts_held(pack: Path) -> frozenset[str]:
    """Every part a pack has rows of, live or dead: from the manifest, else its `_part` column."""
    if pack not in _HELD:
        listed = held(pack.parent).get(pack.name)
        if listed is not None:
            _HELD[pack] = frozenset(listed)
            return _HELD[pack]
        import pyarrow.parquet as pq

        try:
            column = pq.read_table(pack, columns=[PART_COLUMN]).column(PART_COLUMN)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptPartError(pack, f"not readable as a pack ({type(exc).__name__}: {exc})") from exc
        _HELD[pack] = frozenset(pc.unique(column).to_pylist())
    return _HELD[pack]
