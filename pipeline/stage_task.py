"""The one task wrapper: every stage of both flows runs through `run_unit`.

It does, for any stage and one unit of work: the cache check (the unit's commit part exists under
the stage's fingerprint), the reads (each input table from the stage that produces it, under that
stage's fingerprint), the retries, the atomic writes (files, then outputs in declared order, the
last one committing the unit), the rejects and the ledger rows. A stage's `run` never touches the
warehouse.

Layout: `<table>/<fingerprint>/<unit>.parquet`; rejects under the stage's own fingerprint,
`<unit>.parquet` for per-row rejects and `<unit>.unit.parquet` when the whole unit was rejected.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from interleaf.errors import CorruptPartError, DocumentError, InterleafError, StageError, WarehouseWriteError
from interleaf.runtime import interrupt, progress
from interleaf.runtime.heap import return_freed_memory
from interleaf.stage import SOURCE_ROOT, PageMap, Stage, StageInput, StageOutput, chain_fingerprints, describe_version
from pipeline import plan_order
from pipeline.context import RunContext
from pipeline.units import corpus_units, documents_after, eligible, is_done, unit_rejected_part
from warehouse import Warehouse, schemas
from warehouse.ledger import Ledger, RunRecord, now
from warehouse.store import INGEST_GROUP


@dataclass(frozen=True)
class UnitResult:
    stage: str
    unit: str
    status: str  # ok, cached, rejected, skipped, interrupted
    rows: int = 0
    rejects: int = 0
    reason: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


class Plan:
    """The stages of one flow, in dependency order, with their fingerprints. (A plain class: Prefect
    builds a schema of every flow parameter's type, and a Protocol-typed dataclass field has none.)"""

    def __init__(self, stages: list[Stage], fingerprints: dict[str, str], corpus: Sequence[str] | None = None) -> None:
        self.stages, self.fingerprints = stages, fingerprints
        # the documents its query stages read, fixed when the plan was made from one read of the
        # published state: an ingest publishing meanwhile cannot give one stage A and the next B.
        # None: each read takes the published snapshot of that moment.
        self.corpus = tuple(corpus) if corpus is not None else None

    @classmethod
    def of(
        cls,
        stages: Sequence[Stage],
        given: dict[str, str] | None = None,
        root: Path = SOURCE_ROOT,
        corpus: Sequence[str] | None = None,
    ) -> Plan:
        """The stages in the order their declarations give (pipeline/plan_order.py), checked: an input
        no stage writes or a cycle is a PlanError naming the stage. `given`: fingerprints of
        upstreams from outside the flow; `root`: where the stages' source is hashed from (a copy of
        the tree, in tests)."""
        placed = plan_order.ordered(stages, given or {})
        return cls(placed, chain_fingerprints(placed, given, root), corpus)

    def levels(self) -> list[list[str]]:
        """The stages' names by level: a document runs a level's stages side by side."""
        return plan_order.levels(self.stages, self.fingerprints)

    def entry(self, unit: str) -> Stage:
        """The stage a unit of `unit` is made from (it reads no table: parse takes the file, questions
        the question set)."""
        for s in self.stages:
            if s.unit == unit and not s.inputs:
                return s
        raise KeyError(f"no stage of this flow makes a {unit} from its source: {self.names()}")

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage {name!r} in this flow: {[s.name for s in self.stages]}")

    def producers(self, table: str) -> list[Stage]:
        return [s for s in self.stages if table in s.outputs]

    def names(self) -> list[str]:
        return [s.name for s in self.stages]


def read_input(wh: Warehouse, plan: Plan, stage: Stage, unit: str, table: str) -> pa.Table:
    """One input of `stage` for `unit`, from its producers (`read_as`)."""
    return read_as(wh, plan, stage.unit, unit, table, stage.name)


def read_as(wh: Warehouse, plan: Plan, unit_kind: str, unit: str, table: str, reader: str) -> pa.Table:
    """`table` as a stage of `unit_kind` reads it for `unit`: the unit's own part when the producer
    makes units of that kind, else every unit the producer committed (a query stage reads the whole
    corpus). `reader`: who asks, for the error when no stage writes it."""
    producers = plan.producers(table)
    if not producers:
        raise ValueError(f"{reader}: no stage of this flow writes {table!r}")
    parts = []
    corpus: Sequence[str] = []
    if any(p.unit != unit_kind for p in producers):
        corpus = plan.corpus if plan.corpus is not None else corpus_units(wh, plan)
    for producer in producers:
        fp = plan.fingerprints[producer.name]
        units = [unit] if producer.unit == unit_kind else corpus
        parts.append(wh.read_table(table, fp, units))
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


class LazyTables(Mapping[str, pa.Table]):
    """Tables read on first use: a stage that finds what it needs in memory (retrieve's loaded
    index) or never looks at one (every stage but index, at its previous outputs) reads nothing."""

    def __init__(self, names: Sequence[str], load: Callable[[str], pa.Table | None], owner: str) -> None:
        self._names, self._load, self._owner = tuple(names), load, owner
        self._read: dict[str, pa.Table | None] = {}

    @classmethod
    def inputs(cls, wh: Warehouse, plan: Plan, stage: Stage, unit: str) -> LazyTables:
        return cls(stage.inputs, lambda table: read_input(wh, plan, stage, unit, table), stage.name)

    @classmethod
    def as_read_by(cls, wh: Warehouse, plan: Plan, unit_kind: str, unit: str, tables: Sequence[str]) -> LazyTables:
        """`tables` as a stage of `unit_kind` would read them for `unit` (a stored run read back)."""
        reader = f"a {unit_kind} reader"
        return cls(tables, lambda table: read_as(wh, plan, unit_kind, unit, table, reader), reader)

    @classmethod
    def previous(cls, wh: Warehouse, stage: Stage, fingerprint: str, unit: str) -> LazyTables:
        """The unit's outputs under the fingerprint this stage last published, when it differs."""
        published = wh.published_fingerprint(stage.name)
        if published is None or published == fingerprint:
            return cls((), lambda table: None, stage.name)

        def load(table: str) -> pa.Table | None:
            if not wh.has_part(table, published, unit):
                return None
            try:
                return wh.read_part(table, published, unit)
            except CorruptPartError as exc:  # only a saving: the stage computes without it
                progress.note(f"{exc}; {stage.name} {unit[:16]} is computed without its previous outputs")
                return None

        return cls(stage.outputs, load, stage.name)

    def __getitem__(self, table: str) -> pa.Table:
        if table not in self._names:
            raise KeyError(f"stage {self._owner} declares no table {table!r} here")
        if table not in self._read:
            self._read[table] = self._load(table)
        found = self._read[table]
        if found is None:
            raise KeyError(table)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def rejects_table(
    stage: Stage, fingerprint: str, ctx: RunContext, unit: str, items: list[tuple[str | None, str]], path: str | None
) -> pa.Table:
    created = now()
    rows = [
        {
            "stage": stage.name,
            "doc_id": unit if stage.unit == "document" else None,
            "quote_id": item_id,
            "path": path,
            "reason": reason,
            "fingerprint": fingerprint,
            "run_id": ctx.run_id,
            "created_at": created,
        }
        for item_id, reason in items
    ]
    return pa.Table.from_pylist(rows, schema=schemas.REJECTS)


def _record(ctx: RunContext, stage: Stage, fingerprint: str, unit: str, key: str) -> RunRecord:
    return ctx.record(stage.name, fingerprint, stage.config(), describe_version(stage), [unit], key)


def run_unit(
    ctx: RunContext,
    plan: Plan,
    stage_name: str,
    unit: str,
    source: Any = None,
    path: str | None = None,
    page_map: PageMap = map,
    on_saved: Callable[[int], None] | None = None,
) -> UnitResult:
    """Run one stage on one unit, or find it done. `path` names the unit's file in rejects rows.
    `on_saved`: told the rows the unit's checkpoint holds each time it reads or adds to them (parse:
    its pages saved), for the progress display.
    After a stop was asked for, no unit starts and one cut short raises `interrupt.Interrupted`
    with its ledger row `interrupted` and nothing of it written."""
    interrupt.check()
    wh = Warehouse(ctx.warehouse)
    stage = plan.stage(stage_name)
    fp = plan.fingerprints[stage.name]
    ledger = Ledger(wh)
    record = _record(ctx, stage, fp, unit, f"{unit[:16]}-{fp[:8]}")  # a unit may run under several configs
    if not eligible(wh, plan, stage, unit):
        return UnitResult(stage.name, unit, "skipped")
    if not ctx.forced(stage.name) and is_done(wh, stage, fp, unit):
        ledger.finish(record, "cached")
        return UnitResult(stage.name, unit, "cached")

    ledger.start(record)
    checkpoint = UnitCheckpoint(wh, fp, unit, on_saved)
    attempt = 0
    while True:
        try:
            given = StageInput(
                unit=unit,
                tables=LazyTables.inputs(wh, plan, stage, unit),
                root=wh.root,
                fingerprint=fp,
                upstream={u: plan.fingerprints[u] for u in stage.upstream},
                run_id=ctx.run_id,
                previous=LazyTables.previous(wh, stage, fp, unit),
                cache=WarehouseCache(wh, stage.name),
                page_map=page_map,
                source=source,
                checkpoint=checkpoint,
            )
            out = stage.run(given)
            break
        except WarehouseWriteError as exc:  # the disk, not the unit: no retry, the command stops
            _fail_if_room(ledger, record, exc)
            raise
        except interrupt.Interrupted:
            ledger.finish(record, "interrupted")
            raise
        except DocumentError as exc:  # the unit itself is bad input: a reject, the batch goes on
            rows = rejects_table(stage, fp, ctx, unit, [(None, exc.reason)], path or exc.path)
            wh.write_part("rejects", fp, unit_rejected_part(unit), rows)
            checkpoint.drop()
            ledger.finish(record, "rejected")
            return UnitResult(stage.name, unit, "rejected", reason=exc.reason)
        except stage.retry_on as exc:
            if interrupt.requested():
                raise _cut_short(ledger, record, exc) from exc
            attempt += 1
            if attempt > stage.retries:
                ledger.fail(record, exc)
                raise StageError(stage.name, unit, exc) from exc
            time.sleep(min(2.0, 0.5 * attempt))
        except CorruptPartError as exc:  # an input part damaged on disk: its producer's rerun mends it
            ledger.fail(record, exc)
            raise CorruptInputError(stage.name, unit, exc) from exc
        except StageError as exc:
            if interrupt.requested():
                raise _cut_short(ledger, record, exc) from exc
            ledger.fail(record, exc)
            raise
        except Exception as exc:  # a programming error: fail the run, naming the unit
            if interrupt.requested():
                raise _cut_short(ledger, record, exc) from exc
            ledger.fail(record, exc)
            raise StageError(stage.name, unit, exc) from exc

    try:
        _write(wh, stage, fp, unit, out, rejects_table(stage, fp, ctx, unit, out.rejects, path))
    except WarehouseWriteError as exc:
        _fail_if_room(ledger, record, exc)
        raise
    checkpoint.drop()  # after the commit: a stop before it resumes from the checkpoint
    rows = out.tables[stage.outputs[-1]].num_rows
    ledger.finish(record, "ok", rows=rows)
    result = UnitResult(stage.name, unit, "ok", rows, len(out.rejects), counts=out.counts)
    del given, out
    return_freed_memory()  # what the unit's tables freed, kept by malloc and Arrow's pool otherwise
    return result


class CorruptInputError(InterleafError):
    def __init__(self, stage: str, unit: str, cause: CorruptPartError) -> None:
        super().__init__(
            f"{stage} {unit[:16]}: {cause}. Run the command that wrote it again (`interleaf ingest` for a "
            "document's parts): it finds the part damaged, sets it aside and computes it again"
        )
        self.path = cause.path


def _cut_short(ledger: Ledger, record: RunRecord, exc: Exception) -> interrupt.Interrupted:
    """An error once a stop was asked for is the stop's doing (the page workers killed under the
    unit, a model server gone): the unit is abandoned, not failed."""
    ledger.finish(record, "interrupted")
    return interrupt.Interrupted(f"{record.stage} cut short: {exc}")


def _fail_if_room(ledger: Ledger, record: RunRecord, exc: WarehouseWriteError) -> None:
    """The unit's ledger row says `failed` when there is room for it; else it stays `running` and
    the next command's start closes it (`close_dead_runs`)."""
    with contextlib.suppress(WarehouseWriteError):
        ledger.fail(record, exc)


def _write(wh: Warehouse, stage: Stage, fp: str, unit: str, out: StageOutput, rejects: pa.Table) -> None:
    missing = [t for t in stage.outputs if t not in out.tables]
    extra = [t for t in out.tables if t not in stage.outputs]
    if missing or extra:
        raise StageError(stage.name, unit, ValueError(f"outputs differ: missing {missing}, undeclared {extra}"))
    for relpath, blob in out.files.items():
        wh.write_file(relpath, blob)
    wh.write_part("rejects", fp, unit, rejects)
    for table in stage.outputs:  # declared order: the last one commits the unit
        wh.write_part(table, fp, unit, out.tables[table])
    wh.remove_part("rejects", fp, unit_rejected_part(unit))  # an earlier rejection


def record_unchanged(ctx: RunContext, plan: Plan, units: list[str]) -> None:
    """Nothing to run: one `cached` ledger row per stage, so `interleaf runs` shows the run."""
    ledger = Ledger(Warehouse(ctx.warehouse))
    for stage in plan.stages:
        fp = plan.fingerprints[stage.name]
        ledger.finish(_record(ctx, stage, fp, ",".join(units)[:64], f"all-{fp[:8]}"), "cached")


def publish(
    ctx: RunContext,
    plan: Plan,
    group: str,
    only: Sequence[str] | None = None,
    units: Callable[[set[str]], Iterable[str]] | None = None,
    unit: str | None = None,
) -> None:
    """Point the views at this plan's outputs. Every stage `group` published before and not now
    (a retriever removed from config) leaves the views. `units` (document stages): given the
    documents published until now, the documents the views show. `unit` (a question set): the
    views show it beside every unit the group showed before; it leaves the group's other
    fingerprints only."""
    entries = {
        s.name: (plan.fingerprints[s.name], (*s.outputs, "rejects"))
        for s in plan.stages
        if only is None or s.name in only
    }
    wh = Warehouse(ctx.warehouse)
    if unit is not None:
        wh.publish_unit(group, unit, entries)
        return
    # applied to the state read under the publish lock: two ingests do not lose each other's documents
    shown = None if units is None else lambda state: documents_after(wh, state, units)
    wh.publish(group, entries, shown, compact=group == INGEST_GROUP)


class UnitCheckpoint:
    """A unit's checkpoint in the warehouse: `<table>/<fingerprint>/<unit>.<key>.parquet`, sealed
    and schema-checked like any part, never published. A damaged one is set aside and its work
    done again."""

    def __init__(
        self, wh: Warehouse, fingerprint: str, unit: str, on_saved: Callable[[int], None] | None = None
    ) -> None:
        self.wh, self.fingerprint, self.unit = wh, fingerprint, unit
        self.tables: set[str] = set()
        self.on_saved = on_saved  # told the rows on disk: a progress line counts none a stop would lose
        self.rows: dict[str, int] = {}

    def _parts(self, table: str) -> list[Path]:
        return sorted((self.wh.root / table / self.fingerprint).glob(f"{self.unit}.*.parquet"))

    def saved(self, table: str) -> list[pa.Table]:
        self.tables.add(table)
        found = []
        for path in self._parts(table):
            try:
                found.append(self.wh.read_part(table, self.fingerprint, path.stem))
            except CorruptPartError as exc:
                progress.note(f"{exc}; set aside as {self.wh.set_aside(path)}, its work is done again")
        self._held(table, sum(part.num_rows for part in found))
        return found

    def save(self, table: str, key: str, data: pa.Table) -> None:
        self.tables.add(table)
        self.wh.write_part(table, self.fingerprint, f"{self.unit}.{key}", data)
        self._held(table, self.rows.get(table, 0) + data.num_rows)

    def _held(self, table: str, rows: int) -> None:
        self.rows[table] = rows
        if self.on_saved is not None:
            self.on_saved(rows)

    def stored_rows(self, table: str) -> int:
        """The rows its whole parts hold, read changing nothing (a damaged one is the rerun's to set aside)."""
        rows = 0
        for path in self._parts(table):
            with contextlib.suppress(CorruptPartError, FileNotFoundError):
                rows += self.wh.read_part(table, self.fingerprint, path.stem).num_rows
        return rows

    def drop(self) -> None:
        for table in self.tables:
            for path in self._parts(table):
                path.unlink(missing_ok=True)


class WarehouseCache:
    """Content-addressed JSON records under <root>/cache/<stage>/<namespace>/<key>.json; the
    namespace carries the fingerprint of whatever produced the value."""

    def __init__(self, wh: Warehouse, stage: str) -> None:
        self.wh, self.stage = wh, stage.replace(":", "_")

    def _rel(self, namespace: str, key: str) -> str:
        return f"cache/{self.stage}/{namespace}/{key[:2]}/{key}.json"

    def get(self, namespace: str, key: str) -> dict[str, Any] | None:
        path = self.wh.root / self._rel(namespace, key)
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:  # damaged on disk: computed again
            progress.note(f"damaged cache record {path}: {exc}; computed again")
            return None

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        self.wh.write_file(self._rel(namespace, key), json.dumps(value, sort_keys=True).encode())
