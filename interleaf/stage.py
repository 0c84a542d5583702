"""The stage contract: what every stage of both flows declares, and how its fingerprint is made.

A stage is a small object built from its config section. It names its unit of work (a document
for ingest stages, a question set for query stages), the warehouse tables it reads and writes
(schemas in warehouse/schemas.py), the stages it depends on, the source it runs (its own package
and the shared ones it uses), the prompts it renders and the version of what it runs (model id,
engine version). Its `run` turns the input tables of one unit into output tables; the one
generic wrapper in pipeline/stage_task.py does every read, write, cache check, ledger row, reject
and retry around it.

The fingerprint covers all of that, so an edit invalidates exactly what it changes: editing a file
of the describe package changes describe's fingerprint and, through `upstream`, index's and the
query stages', and no other.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import pyarrow as pa

from interleaf.fingerprint import FINGERPRINT_CHARS, canonical_json

Unit = Literal["document", "question_set"]
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Lost:
    """What a page map yields in place of an item's result when the item did not end: its worker
    died ("crashed": a segfault, `os._exit`, the OOM killer), it ran past its time ("hung"), it
    hit the workers' memory cap ("memory"), or the document's time ran out ("timeout")."""

    kind: Literal["crashed", "hung", "memory", "timeout"]
    reason: str


# Where a stage spreads its page-level work (parse's runs of pages, describe's readings):
# `map(fn, items)`, in order. Plain `map` runs inline; the ingest passes a process pool's map or
# the Ray cluster's (interleaf/runtime/executor.py, interleaf/runtime/ray_engine.py), which may yield `Lost`.
PageMap = Callable[[Callable[[T], R], Iterable[T]], Iterator[R | Lost]]


def map_isolating_faults(
    fn: Callable[[T], R], items: list[T], page_map: PageMap, split: Callable[[T], list[T]]
) -> Iterator[tuple[T, R | Lost]]:
    """Each item with its result through `page_map` (parse's runs of pages, describe's runs of
    readings). An item of several parts that was lost (its worker died, hung or hit the memory cap)
    is run again part by part (`split`), which finds the part at fault: only it is lost. A part lost
    to a dead worker gets one more try, on its own: a worker's death also takes the parts of the
    other workers with the pool, so a part that was beside the one at fault twice would otherwise
    be lost with it (seen under load: a test's page 2 killed its worker twice, and page 1 in the
    other worker was rejected both times). A part that hung or ran out of memory gets no other try,
    and items the document's time ran out on ("timeout") are yielded lost as they were."""
    while items:
        again: list[T] = []
        alone: list[T] = []
        for item, result in zip(items, page_map(fn, items), strict=True):
            if not isinstance(result, Lost):
                yield item, result
            elif result.kind != "timeout" and len(parts := split(item)) > 1:
                again += parts
            elif result.kind == "crashed":
                alone.append(item)
            else:
                yield item, result
        for item in alone:
            (result,) = page_map(fn, [item])
            yield item, result
        items = again


SOURCE_ROOT = Path(__file__).resolve().parent.parent  # the folder holding the `interleaf` package


class ContentCache(Protocol):
    """Results cached by content key, across fingerprints (describe: a crop read once stays read)."""

    def get(self, namespace: str, key: str) -> dict[str, Any] | None: ...

    def put(self, namespace: str, key: str, value: dict[str, Any]) -> None: ...


class Checkpoint(Protocol):
    """What a unit saved of its work before it committed (parse: its pages, range by range), so
    that a run cut short resumes where it stopped. Per unit and fingerprint; the wrapper drops it
    once the unit commits."""

    def saved(self, table: str) -> list[pa.Table]: ...

    def save(self, table: str, key: str, data: pa.Table) -> None: ...


@dataclass
class StageInput:
    """One unit's inputs, as the wrapper reads them."""

    unit: str  # doc_id, or the question set's id
    tables: Mapping[str, pa.Table]  # the declared inputs: the unit's parts (ingest) or the whole corpus (query)
    root: Path  # warehouse root: crops and other files written by earlier stages, read-only
    fingerprint: str = ""  # this stage's, for names the stage writes under (crop paths)
    upstream: Mapping[str, str] = field(default_factory=dict)  # the fingerprints its own covers
    run_id: str = ""  # the run computing it, for tables that name their run (eval_metrics)
    # the unit's outputs under the stage's previously published fingerprint: rows a stage may reuse
    previous: Mapping[str, pa.Table] = field(default_factory=dict)
    cache: ContentCache | None = None
    page_map: PageMap = map  # where page-level work runs (parse's pages, describe's readings: page workers)
    source: Any = None  # what the unit is made from when no table holds it yet (parse: the file)
    checkpoint: Checkpoint | None = None


@dataclass
class StageOutput:
    tables: dict[str, pa.Table]  # every declared output
    rejects: list[tuple[str | None, str]] = field(default_factory=list)  # (quote or question id, reason)
    files: dict[str, bytes] = field(default_factory=dict)  # path under the warehouse root -> bytes
    counts: dict[str, int] = field(default_factory=dict)  # what the run did, for reports (pages, read, ...)


class Stage(Protocol):
    name: str  # parse, describe, index:<retriever>, expand, retrieve, generate, evaluate
    unit: Unit
    page_work: bool  # its runs of pages go to the page workers (this machine's, or the Ray cluster's)
    inputs: tuple[str, ...]  # tables read
    outputs: tuple[str, ...]  # tables written; the LAST one commits the unit (written last)
    upstream: tuple[str, ...]  # stages whose fingerprints this one's covers
    sources: tuple[str, ...]  # packages or modules whose source is hashed into the fingerprint
    retries: int  # extra attempts after an error in `retry_on`
    retry_on: tuple[type[BaseException], ...]

    def config(self) -> dict[str, Any]:
        """The settings that change what the stage writes (not speed or logging)."""
        ...

    def prompt_hashes(self) -> list[str]: ...

    def version(self) -> dict[str, str]:
        """What it runs beyond its source: model id, engine version."""
        ...

    def run(self, given: StageInput) -> StageOutput: ...


def _module_files(name: str, root: Path) -> list[Path]:
    path = root.joinpath(*name.split("."))
    if path.is_dir():
        return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
    file = path.with_suffix(".py")
    if file.is_file():
        return [file]
    raise ValueError(f"source {name!r} is neither a package nor a module under {root}")


def source_digest(names: tuple[str, ...], root: Path = SOURCE_ROOT) -> str:
    """Hash of every Python file of the named packages and modules (paths and bytes). Files are
    read again only when their size or modification time changed."""
    files = tuple(p for name in sorted(set(names)) for p in _module_files(name, root))
    signature = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _digest_files(root, signature)


@functools.cache
def _digest_files(root: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for path, _mtime, _size in signature:
        digest.update(str(Path(path).relative_to(root)).encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return digest.hexdigest()[:FINGERPRINT_CHARS]


def fingerprint(stage: Stage, upstream: Mapping[str, str], root: Path = SOURCE_ROOT) -> str:
    """Same config, prompts, upstream outputs, source and implementation -> same name."""
    missing = [u for u in stage.upstream if u not in upstream]
    if missing:
        raise ValueError(f"stage {stage.name}: no fingerprint for upstream stage(s) {missing}")
    payload = {
        "stage": stage.name,
        "config": stage.config(),
        "prompts": sorted(stage.prompt_hashes()),
        "upstream": {u: upstream[u] for u in stage.upstream},
        "source": source_digest(tuple(stage.sources), root),
        "version": stage.version(),
    }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:FINGERPRINT_CHARS]


def chain_fingerprints(
    stages: Iterable[Stage], given: Mapping[str, str] | None = None, root: Path = SOURCE_ROOT
) -> dict[str, str]:
    """Fingerprints of stages listed in dependency order; `given` supplies outside upstreams."""
    out = dict(given or {})
    for stage in stages:
        out[stage.name] = fingerprint(stage, out, root)
    return out


def describe_version(stage: Stage, root: Path = SOURCE_ROOT) -> str:
    """The ledger's `code_version`: source digest and implementation version in one string."""
    version = ",".join(f"{k}={v}" for k, v in sorted(stage.version().items()))
    return f"src:{source_digest(tuple(stage.sources), root)}" + (f";{version}" if version else "")
