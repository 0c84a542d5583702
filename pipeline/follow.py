"""The warehouse follows the folder: which published documents an ingest drops from the views.

A file ingested again with other content is a new document (its id is its SHA-256): the old one
leaves the views when the new one is published. With `--sync` (and in the scheduled ingest), a
published document whose file is gone from a folder the ingest covers leaves them too. Nothing
is deleted here: the parts stay on disk until `interleaf gc`, so an ingest running while a file
disappears, or a removal made by mistake, loses nothing that a rerun cannot point back at.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.units import documents_after
from warehouse import Warehouse
from warehouse.catalog import query
from warehouse.store import INGEST_GROUP


@dataclass(frozen=True)
class Dropped:
    doc_id: str
    path: str
    reason: str  # "file gone", "replaced by a new version", "removed"


def published_paths(wh: Warehouse) -> dict[str, str]:
    """doc_id -> the file it was ingested from, for every published document and rejected file."""
    _, rows = query(
        wh,
        "SELECT doc_id, path FROM documents UNION SELECT doc_id, path FROM rejects "
        "WHERE stage = 'parse' AND quote_id IS NULL AND doc_id IS NOT NULL AND path IS NOT NULL",
    )
    return {doc_id: path for doc_id, path in rows if path}


def _resolved(path: str) -> Path:
    return Path(path).expanduser().resolve()


def _covered(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def documents_to_drop(wh: Warehouse, inputs: dict[str, str], paths: list[str], sync: bool) -> list[Dropped]:
    """The published documents this ingest replaces (`inputs`: path -> doc_id) and, with `sync`,
    those whose file is gone from `paths` (the folders and files the ingest was given)."""
    new_by_path = {_resolved(p): d for p, d in inputs.items()}
    roots = [_resolved(p) for p in paths]
    dropped = []
    for doc_id, stored in sorted(published_paths(wh).items(), key=lambda item: item[1]):
        path = _resolved(stored)
        if path in new_by_path and new_by_path[path] != doc_id:
            dropped.append(Dropped(doc_id, stored, "replaced by a new version"))
        elif sync and path not in new_by_path and _covered(path, roots) and not path.exists():
            dropped.append(Dropped(doc_id, stored, "file gone"))
    return dropped


@dataclass(frozen=True)
class DocumentChange:
    """What an ingest (or `interleaf remove`) does to the published documents."""

    added: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()

    def apply(self, published: set[str]) -> set[str]:
        return (published - self.dropped) | self.added


def remove_documents(wh: Warehouse, doc_ids: set[str]) -> None:
    """Take documents out of the published views, under the fingerprints published now."""
    entries = {v.stage: (v.fingerprint, v.tables) for v in wh.current().values() if v.group == INGEST_GROUP}
    if not entries:
        return
    change = DocumentChange(dropped=frozenset(doc_ids))
    wh.publish(INGEST_GROUP, entries, lambda state: documents_after(wh, state, change.apply))
