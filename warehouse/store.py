"""Parquet parts on disk, written atomically, named by table, fingerprint and part key.

Layout under the root::

    <table>/<fingerprint>/<part>.parquet   one part per document (or per run, for ledgers)
    <table>/_schema.parquet                an empty table, so a view exists before any data
    images/<fingerprint>/<doc_id>/<quote_id>.png
    _state/current.json                    which fingerprint of each stage is current

A part is written under a temporary name in its final folder and renamed into place, so a reader
or a killed writer never sees half a file, and two writers of the same part leave one whole file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from interleaf.errors import WarehouseWriteError
from warehouse import packs, parts, schemas

DEFAULT_ROOT = "warehouse/data"
SET_ASIDE = "_corrupt"  # damaged parts moved out of sight, until `interleaf gc`
INGEST_GROUP = "ingest"  # the publish group of the document stages: its entries name their documents


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--warehouse DIR, else $INTERLEAF_WAREHOUSE, else warehouse/data."""
    root = explicit or os.environ.get("INTERLEAF_WAREHOUSE") or DEFAULT_ROOT
    return Path(root).expanduser().resolve()


def atomic_write_bytes(path: Path, data: bytes | bytearray) -> None:
    """Write `data` to `path` whole or not at all. A failed write (no space left, say) leaves no
    temporary behind and raises WarehouseWriteError naming `path`: the user's error line."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise WarehouseWriteError(path, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class StageState:
    fingerprint: str
    tables: tuple[str, ...]
    stage: str
    group: str  # what published it together with its siblings: ingest, answer:<scope>, ...
    at: float  # when, in seconds since the epoch
    # the units (documents) the views show; None: every part stored under the fingerprint. An
    # ingest names them, so parts an ingest running now has written stay out of sight until it
    # publishes, and a removed document leaves the views while its parts wait for `gc`.
    units: tuple[str, ...] | None = None
    # an entry that accumulates units (a question set's answers, `publish_unit`): when each of its
    # units was last published under it; None for entries published whole
    unit_times: tuple[tuple[str, float], ...] | None = None

    def part_names(self, table: str) -> set[str] | None:
        """The part names of `table` the views read (a rejected unit's part too); None: all."""
        if self.units is None:
            return None
        return {*self.units, *(f"{u}.unit" for u in self.units)} if table == "rejects" else set(self.units)


# `_schema.parquet` files this process has seen match the declared schemas
_CURRENT_SCHEMA_FILES: set[Path] = set()


class PartCache:
    """Parts kept in memory once read, while their file is the same one (inode, size, mtime): a
    long-lived reader (the server) would otherwise read and decode the corpus's parts again for
    every question. The least recently used go past `max_bytes`. Off unless `cache_parts` is called."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[tuple[str, int, int, int], pa.Table] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: Path, schema: pa.Schema) -> pa.Table:
        stat = path.stat()
        key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        table = parts.open_sealed(path, schema)
        with self._lock:
            if key not in self._items:
                self._items[key] = table
                self.bytes += table.nbytes
            while self.bytes > self.max_bytes and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self.bytes -= dropped.nbytes
        return table


_PART_CACHE: PartCache | None = None


def cache_parts(max_bytes: int) -> PartCache:
    """Keep parts read by this process in memory (up to `max_bytes`); for long-lived processes."""
    global _PART_CACHE
    if _PART_CACHE is None or _PART_CACHE.max_bytes != max_bytes:
        _PART_CACHE = PartCache(max_bytes)
    return _PART_CACHE


def _read_parquet(path: Path, schema: pa.Schema) -> pa.Table:
    cache = _PART_CACHE
    return cache.read(path, schema) if cache is not None else parts.open_sealed(path, schema)


# parts this process found whole, by (path, inode, size, mtime): a part is checked once, not at
# every cache check of an ingest
_SOUND: set[tuple[str, int, int, int]] = set()


class Warehouse:
    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = resolve_root(root)
        self.root.mkdir(parents=True, exist_ok=True)

    # -- parts ---------------------------------------------------------------------------
    def part_path(self, table: str, fingerprint: str, part: str) -> Path:
        return self.root / table / fingerprint / f"{part}.parquet"

    def has_part(self, table: str, fingerprint: str, part: str) -> bool:
        """The part is stored: its own file, or rows of a pack (warehouse/packs.py)."""
        if self.part_path(table, fingerprint, part).exists():
            return True
        return part in packs.manifest(packs.folder_of(self.root, table, fingerprint))

    def stored_parts(self, table: str, fingerprint: str) -> set[str]:
        """The names of every part stored under `fingerprint`, own file or packed."""
        return packs.stored_parts(self.root, table, fingerprint)

    def write_part(self, table: str, fingerprint: str, part: str, data: pa.Table) -> Path:
        checked = schemas.check(table, data)
        self.ensure_schema_file(table)
        path = self.part_path(table, fingerprint, part)
        atomic_write_bytes(path, parts.seal(checked))
        return path

    def remove_part(self, table: str, fingerprint: str, part: str) -> None:
        """The part leaves the folder: its own file, and its name in the pack manifest (under the
        publish lock, which compaction holds while it rewrites the manifest)."""
        self.part_path(table, fingerprint, part).unlink(missing_ok=True)
        folder = packs.folder_of(self.root, table, fingerprint)
        if part not in packs.manifest(folder):
            return
        with self.locked():
            named = packs.manifest(folder)
            if part in named:
                kept = packs.without_parts(named, [part])
                atomic_write_bytes(folder / packs.MANIFEST, packs.manifest_bytes(kept, packs.held(folder)))

    def check_part(self, path: Path) -> None:
        """Raise CorruptPartError when the part at `path` is not the file that was written."""
        stat = path.stat()
        key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if key in _SOUND:
            return
        parts.check(path.read_bytes(), path)
        _SOUND.add(key)

    def set_aside(self, path: Path) -> Path:
        """Move a corrupt part out of the views' and the cache check's sight, kept for a look:
        `_corrupt/<its path>.<time>`. Its unit is then missing, so the next run computes it again."""
        target = self.root / SET_ASIDE / f"{path.relative_to(self.root)}.{time.strftime('%Y%m%dT%H%M%S')}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        return target

    def read_part(self, table: str, fingerprint: str, part: str) -> pa.Table:
        """One part's rows; FileNotFoundError when it is stored nowhere."""
        path = self.part_path(table, fingerprint, part)
        if path.exists():
            return _read_parquet(path, schemas.schema_of(table))
        found = self.read_table(table, fingerprint, [part])
        if not found.num_rows and not self.has_part(table, fingerprint, part):
            raise FileNotFoundError(path)
        return found

    def read_table(self, table: str, fingerprint: str, parts: list[str] | None = None) -> pa.Table:
        """The rows of `parts` (None: every part stored), in the order of their names. A file
        removed while it was read (a compaction packed it) sends the read back to the manifest."""
        for attempt in range(3):
            try:
                return self._read_parts(table, fingerprint, parts)
            except FileNotFoundError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _read_parts(self, table: str, fingerprint: str, parts: list[str] | None) -> pa.Table:
        where = packs.locate(self.root, table, fingerprint, parts)
        schema = schemas.schema_of(table)
        chunks: dict[str, pa.Table] = {path.stem: _read_parquet(path, schema) for path in where.files}
        for pack, names in where.packs.items():
            chunks |= packs.rows_of(_read_parquet(pack, packs.pack_schema(table)), names)
        if not chunks:
            return schemas.empty(table)
        return pa.concat_tables(chunks[name] for name in sorted(chunks))

    def table_glob(self, table: str, fingerprint: str) -> Path:
        return self.root / table / fingerprint / "*.parquet"

    def ensure_schema_file(self, table: str) -> None:
        path = self.schema_file(table)
        if path in _CURRENT_SCHEMA_FILES:  # checked once per process, not on every part written
            return
        # rewritten when the declared schema changed: an empty view shows the columns it has now
        if not path.exists() or not pq.read_schema(path).equals(schemas.schema_of(table), check_metadata=False):
            sink = pa.BufferOutputStream()
            pq.write_table(schemas.empty(table), sink)
            atomic_write_bytes(path, sink.getvalue().to_pybytes())
        _CURRENT_SCHEMA_FILES.add(path)

    def schema_file(self, table: str) -> Path:
        return self.root / table / "_schema.parquet"

    # -- files kept with the warehouse ------------------------------------------------------
    def write_file(self, relpath: str, data: bytes) -> Path:
        path = self.root / relpath
        atomic_write_bytes(path, data)
        return path

    # -- which fingerprint of each stage is current -------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with (self.root / ".lock").open("a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @property
    def _state_path(self) -> Path:
        return self.root / "_state" / "current.json"

    def current(self) -> dict[str, StageState]:
        """Published entries, `<group>/<stage>` -> what the views show for that stage."""
        if not self._state_path.exists():
            return {}
        raw = json.loads(self._state_path.read_text())
        return {
            k: StageState(
                v["fingerprint"],
                tuple(v["tables"]),
                v.get("stage", k),
                v.get("group", ""),
                v.get("at", 0.0),
                _units(v),
                tuple(sorted(v["unit_times"].items())) if v.get("unit_times") is not None else None,
            )
            for k, v in raw.items()
        }

    def write_state(self, state: Mapping[str, StageState]) -> None:
        """Replace the published state whole; the caller holds `locked()` and read it under it."""
        raw = {
            k: {
                "fingerprint": v.fingerprint,
                "tables": list(v.tables),
                "stage": v.stage,
                "group": v.group,
                "at": v.at,
                # an accumulating entry's units are its `unit_times`' keys: written once
                **({"units": list(v.units)} if v.units is not None and v.unit_times is None else {}),
                **({"unit_times": dict(v.unit_times)} if v.unit_times is not None else {}),
            }
            for k, v in state.items()
        }
        atomic_write_bytes(self._state_path, json.dumps(raw, indent=2, sort_keys=True).encode())

    def publish(
        self,
        group: str,
        entries: dict[str, tuple[str, tuple[str, ...]]],
        units: Callable[[dict[str, StageState]], Iterable[str] | None] | None = None,
        compact: bool = False,
    ) -> None:
        """Make `entries` (stage -> (fingerprint, tables)) what the views show for `group`; the
        group's earlier entries that are not in `entries` are dropped from the views. `units`,
        given the published state as it is under the lock, says which units the views show.
        `compact`: then merge the group's published parts into packs (warehouse/compact.py)."""
        with self.locked():
            before = self.current()
            shown = units(before) if units is not None else None
            names = tuple(sorted(set(shown))) if shown is not None else None
            state = {k: v for k, v in before.items() if v.group != group}
            at = time.time()
            for stage, (fingerprint, tables) in entries.items():
                state[f"{group}/{stage}"] = StageState(fingerprint, tuple(tables), stage, group, at, names)
            self.write_state(state)
            if compact:
                self._compact(state, group)

    def _compact(self, state: dict[str, StageState], group: str) -> None:
        """Compaction after a publish: a saving, so a full disk leaves the loose parts as they are."""
        from interleaf.runtime import progress
        from warehouse.compact import compact_published

        try:
            compact_published(self, state, [group])
        except WarehouseWriteError as exc:
            progress.note(f"compaction left for later: {exc}")

    def publish_unit(self, group: str, unit: str, entries: dict[str, tuple[str, tuple[str, ...]]]) -> None:
        """Show `unit` (a question set) under `entries` (stage -> (fingerprint, tables)) in `group`,
        beside every other unit the group shows: answers accumulate. The unit leaves the group's
        other fingerprints (answered again under another configuration: its older parts go to
        `gc`); the group's other units stay where they are."""
        with self.locked():
            state = self.current()
            at = time.time()
            kept: dict[str, tuple[StageState, dict[str, float]]] = {}
            for key in [k for k, v in state.items() if v.group == group]:
                entry = state.pop(key)
                times = dict(entry.unit_times) if entry.unit_times is not None else self._stored_units(entry)
                times.pop(unit, None)
                if times:  # one key per stage and fingerprint (an entry published whole is keyed by stage)
                    _, prior = kept.setdefault(f"{group}/{entry.stage}@{entry.fingerprint}", (entry, {}))
                    prior.update(times)
            for stage, (fingerprint, tables) in entries.items():
                entry = StageState(fingerprint, tuple(tables), stage, group, at)
                _, prior = kept.setdefault(f"{group}/{stage}@{fingerprint}", (entry, {}))
                kept[f"{group}/{stage}@{fingerprint}"] = (entry, prior | {unit: at})
            for key, (entry, times) in kept.items():
                state[key] = replace(entry, units=tuple(sorted(times)), unit_times=tuple(sorted(times.items())))
            self.write_state(state)
            self._compact(state, group)  # every question set adds parts to each answer table

    def _stored_units(self, entry: StageState) -> dict[str, float]:
        """The units an entry published whole (before answers accumulated) shows: its parts."""
        table = next((t for t in entry.tables if t != "rejects"), None)
        if table is None:
            return {}
        return {p: entry.at for p in self.stored_parts(table, entry.fingerprint) if "." not in p}

    def published_reads(self, table: str, state: Mapping[str, StageState] | None = None) -> packs.PackedRead:
        """What the views of `table` read: under each published fingerprint, the published units'
        parts (every part when the entry names no units), as own files and parts of packs.
        `state`: a published state read before (`current()`), so that several tables are read
        from one snapshot."""
        wanted: dict[str, set[str] | None] = {}
        for entry in (self.current() if state is None else state).values():
            if table not in entry.tables:
                continue
            names = entry.part_names(table)
            prior = wanted.get(entry.fingerprint, set())
            wanted[entry.fingerprint] = None if names is None or prior is None else prior | names
        found = packs.PackedRead()
        for fingerprint, names in sorted(wanted.items()):
            where = packs.locate(self.root, table, fingerprint, names)
            found.files.extend(where.files)
            found.packs.update(where.packs)
        return found

    def published_files(self, table: str, state: Mapping[str, StageState] | None = None) -> list[Path]:
        """The files the views of `table` read (own parts and packs)."""
        return sorted(self.published_reads(table, state).paths)

    def published_fingerprint(self, stage: str) -> str | None:
        """The fingerprint `stage` was last published under, in any group."""
        entries = [v for v in self.current().values() if v.stage == stage]
        return max(entries, key=lambda v: v.at).fingerprint if entries else None

    def current_fingerprints(self, table: str) -> list[str]:
        return sorted({s.fingerprint for s in self.current().values() if table in s.tables})

    def remove_stale_temporaries(self, older_than_s: float = 3600.0) -> int:
        """Temporary files left by a killed writer; they are never read, only tidied.

        Only old ones: a younger one may belong to an ingest running at this moment.
        """
        removed = 0
        now = time.time()
        for tmp in self.root.rglob(".*.tmp-*"):
            with contextlib.suppress(FileNotFoundError):
                if now - tmp.stat().st_mtime > older_than_s:
                    tmp.unlink()
                    removed += 1
        return removed


def _units(raw: Mapping[str, object]) -> tuple[str, ...] | None:
    """A stored entry's units: listed, or the keys of its `unit_times`; None when it names none."""
    if raw.get("unit_times") is not None:
        return tuple(sorted(raw["unit_times"]))  # type: ignore[call-overload]
    return tuple(raw["units"]) if raw.get("units") is not None else None  # type: ignore[call-overload]


def units_published_before(
    state: Mapping[str, StageState], before: float, groups: Callable[[str], bool]
) -> dict[str, set[str]]:
    """group -> the units its accumulating entries last published before `before`. A unit counts
    by its latest publish in the group, so a set answered since stays whole."""
    latest: dict[tuple[str, str], float] = {}
    for entry in state.values():
        if entry.unit_times is None or not groups(entry.group):
            continue
        for unit, at in entry.unit_times:
            latest[(entry.group, unit)] = max(at, latest.get((entry.group, unit), 0.0))
    taken: dict[str, set[str]] = {}
    for (group, unit), at in latest.items():
        if at < before:
            taken.setdefault(group, set()).add(unit)
    return taken


def without_units(state: Mapping[str, StageState], taken: Mapping[str, set[str]]) -> dict[str, StageState]:
    """`state` with the units `taken` (group -> units) out of its accumulating entries; an entry
    left with none leaves."""
    out: dict[str, StageState] = {}
    for key, entry in state.items():
        gone = taken.get(entry.group, set())
        if entry.unit_times is None or not gone:
            out[key] = entry
            continue
        times = {u: at for u, at in entry.unit_times if u not in gone}
        if times:
            out[key] = replace(entry, units=tuple(sorted(times)), unit_times=tuple(sorted(times.items())))
    return out
