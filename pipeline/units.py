"""Which units are done and which the corpus shows: the cache check (a unit's parts stored whole
under the stage's fingerprint), eligibility (its upstream stages committed it), and the published
snapshot a query stage searches (the documents the last ingest published)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from interleaf.errors import CorruptPartError
from interleaf.runtime import progress
from interleaf.stage import Stage
from pipeline.context import RunContext
from warehouse import Warehouse
from warehouse.store import INGEST_GROUP, StageState

if TYPE_CHECKING:
    from pipeline.stage_task import Plan


def unit_rejected_part(unit: str) -> str:
    return f"{unit}.unit"


def is_done(wh: Warehouse, stage: Stage, fingerprint: str, unit: str) -> bool:
    """The unit's outputs (or its rejection) are stored whole. A part found damaged is set aside
    and reported, and the unit counts as not done, so it is computed again."""
    committed = wh.has_part(stage.outputs[-1], fingerprint, unit)
    if not committed and not wh.has_part("rejects", fingerprint, unit_rejected_part(unit)):
        return False
    return _parts_whole(wh, stage, fingerprint, unit) and (
        not committed or all(wh.has_part(t, fingerprint, unit) for t in ("rejects", *stage.outputs))
    )  # a committed unit has all its parts (`_write`): one missing was set aside


def set_aside_damaged(wh: Warehouse, plan: Plan, units: Iterable[str]) -> None:
    """Check the stored parts of `units` in every stage of `plan`: the damaged ones are set aside
    and reported, so the views open and the units run again."""
    for stage in plan.stages:
        for unit in units:
            _parts_whole(wh, stage, plan.fingerprints[stage.name], unit)


def _parts_whole(wh: Warehouse, stage: Stage, fingerprint: str, unit: str) -> bool:
    """False when a stored part of the unit is damaged (it is then set aside, and reported)."""
    whole = True
    for table, part in [*((t, unit) for t in stage.outputs), ("rejects", unit), ("rejects", unit_rejected_part(unit))]:
        path = wh.part_path(table, fingerprint, part)
        try:
            wh.check_part(path)
        except FileNotFoundError:
            continue
        except CorruptPartError as exc:
            moved = wh.set_aside(path)
            where = moved.relative_to(wh.root)
            progress.note(f"{exc}; set aside as {where}: {stage.name} {unit[:16]} is computed again")
            whole = False
    return whole


def is_committed(wh: Warehouse, stage: Stage, fingerprint: str, unit: str) -> bool:
    return wh.has_part(stage.outputs[-1], fingerprint, unit)


def committed_units(wh: Warehouse, stage: Stage, fingerprint: str) -> list[str]:
    return sorted(wh.stored_parts(stage.outputs[-1], fingerprint))


def document_upstreams(plan: Plan, stage: Stage) -> list[Stage]:
    """The document stages whose outputs this document stage reads: a unit is eligible once all
    of them have committed it."""
    found: dict[str, Stage] = {}
    for table in stage.inputs:
        for producer in plan.producers(table):
            if producer.unit == "document" and producer.name != stage.name:
                found[producer.name] = producer
    return list(found.values())


def eligible(wh: Warehouse, plan: Plan, stage: Stage, unit: str) -> bool:
    if stage.unit != "document":
        return True  # a query stage reads whatever the corpus holds
    return all(is_committed(wh, p, plan.fingerprints[p.name], unit) for p in document_upstreams(plan, stage))


def pending(ctx: RunContext, plan: Plan, stage: Stage, units: Iterable[str]) -> list[str]:
    """The units this stage still has to run (eligible, and not done or forced). File checks only."""
    wh = Warehouse(ctx.warehouse)
    fp = plan.fingerprints[stage.name]
    return [
        u for u in units if eligible(wh, plan, stage, u) and (ctx.forced(stage.name) or not is_done(wh, stage, fp, u))
    ]


def published_documents(wh: Warehouse, state: dict[str, StageState] | None = None) -> set[str] | None:
    """The documents the last ingest published (None: published before ingests named them, so
    every stored document counts; an empty set: nothing published). `state`: the published
    state already read (under the publish lock), else it is read now."""
    entries = [v for v in (wh.current() if state is None else state).values() if v.group == INGEST_GROUP]
    if not entries:
        return set()
    latest = max(entries, key=lambda v: v.at)
    return set(latest.units) if latest.units is not None else None


def documents_after(
    wh: Warehouse, state: dict[str, StageState], change: Callable[[set[str]], Iterable[str]]
) -> Iterable[str]:
    """What the ingest group shows once `change` is applied to what it shows in `state` (a
    publish that named no documents showed every one its parse stored)."""
    before = published_documents(wh, state)
    return change(_legacy_documents(wh, state) if before is None else before)


def _legacy_documents(wh: Warehouse, state: dict[str, StageState]) -> set[str]:
    """The documents a publish that named none showed: every part of its parse outputs."""
    entry = state.get(f"{INGEST_GROUP}/parse")
    if entry is None:
        return set()
    found: set[str] = set()
    for table in entry.tables:
        found.update(p.removesuffix(".unit") for p in wh.stored_parts(table, entry.fingerprint))
    return found


def corpus_units(wh: Warehouse, plan: Plan, state: dict[str, StageState] | None = None) -> list[str]:
    """What a query stage searches: the published documents that every document stage of `plan`
    has committed under its fingerprint. Parts an ingest running now writes are not published
    yet, so a question asked meanwhile reads the snapshot the last ingest left. `state`: the
    published state already read, else it is read now."""
    shown = published_documents(wh, state)
    units: set[str] | None = shown
    for stage in plan.stages:
        if stage.unit == "document":
            done = set(committed_units(wh, stage, plan.fingerprints[stage.name]))
            units = done if units is None else units & done
    return sorted(units or ())


def corpus_digest(plan: Plan, documents: Sequence[str]) -> str:
    """Names what a query stage searches: the corpus's documents and the fingerprints they are under."""
    state = {
        "documents": sorted(documents),
        "fingerprints": [plan.fingerprints[s.name] for s in plan.stages if s.unit == "document"],
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]
