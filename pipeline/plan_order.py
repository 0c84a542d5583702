"""A flow's order, from what its stages declare: a stage depends on the stages it names in
`upstream` and on the producers of its `inputs`. The plan is checked when it is built: an input no
stage writes, an upstream that is neither a stage nor given, or a cycle is an error naming the stage.

Stages that depend on nothing between them share a level: a document runs a level's stages side by
side (the index stages, one per retriever) and the next level once they have all ended."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from interleaf.errors import InterleafError
from interleaf.stage import Stage


class PlanError(InterleafError):
    """A flow's stages do not fit together."""


def dependencies(stages: Sequence[Stage], given: Collection[str] = ()) -> dict[str, list[str]]:
    """Stage name -> the names of the stages of `stages` it depends on. `given`: upstream names
    supplied from outside the flow (the corpus digest a query stage's fingerprint covers)."""
    names = [s.name for s in stages]
    if len(set(names)) != len(names):
        raise PlanError(f"two stages share a name: {sorted(n for n in set(names) if names.count(n) > 1)}")
    producers: dict[str, list[str]] = {}
    for s in stages:
        for table in s.outputs:
            producers.setdefault(table, []).append(s.name)
    out: dict[str, list[str]] = {}
    for s in stages:
        deps: list[str] = []
        for name in s.upstream:
            if name in names:
                deps.append(name)
            elif name not in given:
                raise PlanError(f"stage {s.name}: its upstream {name!r} is no stage of this flow ({', '.join(names)})")
        for table in s.inputs:
            if table not in producers:
                raise PlanError(f"stage {s.name}: no stage of this flow writes its input table {table!r}")
            deps.extend(p for p in producers[table] if p != s.name)
        out[s.name] = list(dict.fromkeys(deps))
    return out


def ordered(stages: Sequence[Stage], given: Collection[str] = ()) -> list[Stage]:
    """`stages` so that each comes after every stage it depends on; the declared order where it
    already does. A cycle is an error naming its stages."""
    return _ordered(stages, dependencies(stages, given))


def _ordered(stages: Sequence[Stage], deps: dict[str, list[str]]) -> list[Stage]:
    placed: list[Stage] = []
    done: set[str] = set()
    left = list(stages)
    while left:
        ready = next((s for s in left if all(d in done for d in deps[s.name])), None)
        if ready is None:
            raise PlanError(f"the stages {', '.join(s.name for s in left)} depend on each other in a cycle")
        placed.append(ready)
        done.add(ready.name)
        left.remove(ready)
    return placed


def levels(stages: Sequence[Stage], given: Collection[str] = ()) -> list[list[str]]:
    """The stages' names by level: a stage's level is one more than the highest level of the
    stages it depends on."""
    deps = dependencies(stages, given)
    level: dict[str, int] = {}
    for s in _ordered(stages, deps):
        level[s.name] = 1 + max((level[d] for d in deps[s.name]), default=-1)
    out: list[list[str]] = [[] for _ in range(1 + max(level.values(), default=-1))]
    for s in stages:
        out[level[s.name]].append(s.name)
    return out
