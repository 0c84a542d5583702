"""Compaction: the published parts of each table and fingerprint merged into packs (warehouse/packs.py).

Run by the ingest's publish, under the publish lock, for the folders its entries show, and by
`interleaf gc --compact` for every published folder and the ledger. A folder is compacted when it
holds `packs.MIN_LOOSE` loose parts or more (`gc --compact`: two or more); its loose parts and its
small packs are read, checked, and written again as packs of about `packs.TARGET_BYTES`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from interleaf.errors import CorruptPartError
from interleaf.runtime import progress
from warehouse import packs, parts, schemas
from warehouse.store import StageState, Warehouse, atomic_write_bytes

LEDGER_FOLDER = ("runs", "ledger")


@dataclass
class Compacted:
    parts: int = 0  # parts moved from their own files into packs
    packs_written: int = 0
    files_removed: int = 0  # loose parts and emptied packs
    folders: list[str] = field(default_factory=list)


def compact_published(
    wh: Warehouse,
    state: Mapping[str, StageState],
    groups: Iterable[str] | None = None,
    min_loose: int = packs.MIN_LOOSE,
) -> Compacted:
    """Compact the folders the entries of `groups` (None: every group) show, and the ledger. The
    caller holds `wh.locked()`."""
    done = Compacted()
    wanted = None if groups is None else set(groups)
    shown: dict[tuple[str, str], set[str] | None] = {}
    for entry in state.values():
        if wanted is not None and entry.group not in wanted:
            continue
        for table in entry.tables:
            names = entry.part_names(table)
            prior = shown.get((table, entry.fingerprint), set())
            shown[(table, entry.fingerprint)] = None if names is None or prior is None else prior | names
    for (table, fingerprint), names in sorted(shown.items(), key=lambda kv: kv[0]):
        if names is None:  # an entry that names no units shows every part: nothing says which are settled
            continue
        compact_folder(wh, table, fingerprint, names, min_loose, done)
    compact_folder(wh, *LEDGER_FOLDER, None, min_loose, done)
    return done


def compact_folder(
    wh: Warehouse, table: str, fingerprint: str, shown: set[str] | None, min_loose: int, done: Compacted
) -> None:
    """Pack the loose parts of one folder that `shown` names (None: the ledger's finished runs)
    with the folder's small packs. The caller holds `wh.locked()`."""
    folder = wh.root / table / fingerprint
    pack_folder = folder / packs.PACKS
    loose = {p.stem: p for p in folder.glob("*.parquet") if shown is None or p.stem in shown}
    old = packs.manifest(pack_folder)
    # A loose part the manifest names too is left by a compaction killed before its unlinks (or was
    # written again since): the folder is compacted whatever its count, so no part stays in two places.
    enough = max(min_loose, 1)
    if len(loose) < enough and not loose.keys() & old.keys():
        return
    schema = schemas.schema_of(table)
    taken: dict[str, pa.Table] = {}
    stats: dict[str, os.stat_result] = {}
    for name, path in sorted(loose.items()):
        try:
            stats[name] = path.stat()
            rows = parts.open_sealed(path, schema)
        except FileNotFoundError:  # removed meanwhile (gc of an older run): nothing to pack
            continue
        except CorruptPartError as exc:
            progress.note(f"{exc}; set aside as {wh.set_aside(path).relative_to(wh.root)}, its unit is computed again")
            continue
        if shown is None and not _finished(rows):
            continue  # a ledger row still running is rewritten by its run, or closed by the next command
        taken[name] = rows
    if not taken or (len(taken) < enough and not taken.keys() & old.keys()):
        return
    live = packs.live_parts(pack_folder)
    small = [p for p in sorted(live) if (pack_folder / p).stat().st_size < packs.TARGET_BYTES // 2]
    for pack in small:
        rows = parts.open_sealed(pack_folder / pack, packs.pack_schema(table))
        for name, part_rows in packs.rows_of(rows, live[pack]).items():
            taken.setdefault(name, part_rows)
    written = _write_packs(table, pack_folder, taken)
    held = {
        **packs.held(pack_folder),
        **{pack: [n for n, p in written.items() if p == pack] for pack in set(written.values())},
    }
    atomic_write_bytes(pack_folder / packs.MANIFEST, packs.manifest_bytes({**old, **written}, held))
    done.parts += sum(1 for name in written if name in loose)
    done.packs_written += len(set(written.values()))
    done.folders.append(f"{table}/{fingerprint}")
    for name, path in loose.items():  # the manifest names them now: their own files go
        if name in written and _unchanged(path, stats.get(name)):
            path.unlink(missing_ok=True)
            done.files_removed += 1
    for pack in packs.unreferenced_packs(pack_folder):
        if pack.name in small:
            pack.unlink(missing_ok=True)
            done.files_removed += 1


def _finished(rows: pa.Table) -> bool:
    return rows.num_rows > 0 and not pc.any(pc.equal(rows.column("status"), "running")).as_py()


def _unchanged(path: Path, before: os.stat_result | None) -> bool:
    """The file is the one read: not written again since (its own file would win over the pack)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    return before is not None and (now.st_ino, now.st_size, now.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def _write_packs(table: str, folder: Path, taken: dict[str, pa.Table]) -> dict[str, str]:
    """Write `taken` (part -> rows) as packs of about TARGET_BYTES (Arrow's in-memory size, which
    Parquet's zstd shrinks several times); returns part -> pack file name."""
    batches: list[list[str]] = [[]]
    size = 0
    for name in sorted(taken):
        nbytes = taken[name].nbytes
        if batches[-1] and size + nbytes > packs.TARGET_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(name)
        size += nbytes
    written: dict[str, str] = {}
    for batch in batches:
        if not batch:
            continue
        data = packs.pack_bytes(table, {name: taken[name] for name in batch})
        name = packs.pack_name(data)
        atomic_write_bytes(folder / name, data)
        written.update(dict.fromkeys(batch, name))
    return written
