"""`interleaf gc`: delete what no published entry references.

Kept: every part of a published fingerprint that the entry shows (its units, or all of them when
it names none), the crops of the documents shown, the ledger, and anything written after the last
publish of the group that writes it: that belongs to a run (an ingest) that has not published yet. Deleted: the parts
of fingerprints nothing publishes any more (an older configuration or code), the parts of
documents that left the views (removed, replaced, their file gone), and their crops, and the
damaged parts an ingest set aside.

Answers are kept: every question set stored stays in the views under the fingerprints it was last
answered with (`Warehouse.publish_unit`), so `gc` frees only what a set answered again left
behind. Taking answers out is a choice the user states: `--answers-before DATE` first takes the
question sets last answered before DATE out of the views, then frees their parts.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from warehouse import packs, schemas
from warehouse.store import (
    INGEST_GROUP,
    SET_ASIDE,
    StageState,
    Warehouse,
    atomic_write_bytes,
    units_published_before,
    without_units,
)

IMAGES = "images"
KEPT_FOLDERS = {"ledger"}  # `runs` parts: the history, never collected


@dataclass
class Garbage:
    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # crops of a document, deleted whole
    bytes: int = 0
    by_table: Counter[str] = field(default_factory=Counter)
    # `--answers-before`: group (answer:doc, eval:<variant>:corpus, ...) -> the question sets taken out
    question_sets: dict[str, set[str]] = field(default_factory=dict)
    # packed parts no entry shows: a `_packs` folder -> the part names its manifest drops
    unpacked: dict[Path, set[str]] = field(default_factory=dict)

    def add(self, path: Path, table: str) -> None:
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
        (self.folders if path.is_dir() else self.files).append(path)
        self.bytes += size
        self.by_table[table] += 1


def find_garbage(wh: Warehouse, current: dict[str, StageState] | None = None) -> Garbage:
    """What `current` (default: the published state) references no more."""
    current = wh.current() if current is None else current
    # A part written after the last publish of the group that writes its table belongs to a run
    # of that group still going (an answer's publish says nothing about an ingest running now).
    ingest = [e for e in current.values() if e.group == INGEST_GROUP]
    ingest_at = max((e.at for e in ingest), default=0.0)
    ingest_tables = {IMAGES, *(t for e in ingest for t in e.tables)}
    garbage = Garbage()

    def settled(path: Path, table: str) -> bool:
        if table in ingest_tables:
            since = ingest_at
        else:
            since = max((e.at for e in current.values() if table in e.tables), default=ingest_at)
        return path.stat().st_mtime < since

    for table in schemas.TABLES:
        for folder in sorted(p for p in (wh.root / table).glob("*") if p.is_dir() and p.name not in KEPT_FOLDERS):
            entries = [e for e in current.values() if e.fingerprint == folder.name and table in e.tables]
            shown: set[str] | None = set()
            for entry in entries:
                names = entry.part_names(table)
                shown = None if names is None or shown is None else shown | names
            for part in sorted(folder.glob("*.parquet")):
                if (shown is None or part.stem in shown) or not settled(part, table):
                    continue
                garbage.add(part, table)
            _packed_garbage(folder / packs.PACKS, table, shown, bool(entries), settled, garbage)

    docs_shown: dict[str, set[str] | None] = {}  # crops are under the parse fingerprint, by doc_id[:16]
    for entry in current.values():
        prior = docs_shown.get(entry.fingerprint, set())
        units = entry.units
        docs_shown[entry.fingerprint] = None if units is None or prior is None else prior | {u[:16] for u in units}
    for folder in sorted(p for p in (wh.root / IMAGES).glob("*/*") if p.is_dir()):
        fingerprint = folder.parent.name
        shown_here = docs_shown.get(fingerprint, set())
        if fingerprint in docs_shown and (shown_here is None or folder.name in shown_here):
            continue
        if settled(folder, IMAGES):
            garbage.add(folder, IMAGES)
    if (wh.root / SET_ASIDE).is_dir():  # damaged parts, kept for a look until now
        garbage.add(wh.root / SET_ASIDE, SET_ASIDE)
    return garbage


def _packed_garbage(
    folder: Path,
    table: str,
    shown: set[str] | None,
    published: bool,
    settled: Callable[[Path, str], bool],
    garbage: Garbage,
) -> None:
    """A folder's packs: the whole `_packs` folder when no entry publishes the fingerprint, else
    the packed parts no entry shows (dropped from the manifest) and the packs left with no live part."""
    if not folder.is_dir():
        return
    if not published:
        if settled(folder, table):
            garbage.add(folder, table)
        return
    named = packs.manifest(folder)
    dropped = {p for p, pack in named.items() if shown is not None and p not in shown and settled(folder / pack, table)}
    if dropped:
        garbage.unpacked[folder] = dropped
        garbage.by_table[table] += len(dropped)
    live = {pack for p, pack in named.items() if p not in dropped}
    for pack in sorted(folder.glob("*.parquet")):
        if pack.name not in live and settled(pack, table):
            garbage.add(pack, table)


def collect(wh: Warehouse, dry_run: bool, answers_before: float | None = None) -> Garbage:
    """Find the garbage and, unless `dry_run`, delete it (under the publish lock, so that no
    publish changes what is referenced while it goes). `answers_before` (seconds since the
    epoch): the question sets last answered before it leave the views first, and their parts go."""
    if dry_run:
        state, taken = _pruned(wh.current(), answers_before)
        return _with_question_sets(find_garbage(wh, state), taken)
    with wh.locked():
        state, taken = _pruned(wh.current(), answers_before)
        if taken:
            wh.write_state(state)
        garbage = _with_question_sets(find_garbage(wh, state), taken)
        for folder, dropped in garbage.unpacked.items():  # the manifest first: no live part is in what goes
            named = packs.without_parts(packs.manifest(folder), dropped)
            atomic_write_bytes(folder / packs.MANIFEST, packs.manifest_bytes(named, packs.held(folder)))
        for path in garbage.files:
            path.unlink(missing_ok=True)
        for folder in garbage.folders:
            shutil.rmtree(folder, ignore_errors=True)
        for parent in {p.parent for p in [*garbage.files, *garbage.folders]}:
            if parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
    return garbage


def _pruned(state: dict[str, StageState], before: float | None) -> tuple[dict[str, StageState], dict[str, set[str]]]:
    if before is None:
        return state, {}
    taken = units_published_before(state, before, lambda group: group != INGEST_GROUP)
    return without_units(state, taken), taken


def _with_question_sets(garbage: Garbage, taken: dict[str, set[str]]) -> Garbage:
    garbage.question_sets = taken
    return garbage
