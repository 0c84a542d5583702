"""What an ingest says of its documents' stored work, read from the warehouse: the first line, before
the flow and Prefect's server start (seconds), and what an interrupted run keeps.

Both read what is on disk, not what the command counted: a parse saves its pages run by run in its
checkpoint (pipeline/stage_task.py), and those are the pages a rerun does not parse again.
"""

from __future__ import annotations

from pathlib import Path

from interleaf.parse.resume import TABLE as PAGE_RESULTS
from pipeline.stage_task import Plan, UnitCheckpoint
from pipeline.units import is_committed, unit_rejected_part
from warehouse import Warehouse


def pages_saved(wh: Warehouse, plan: Plan, doc_id: str) -> int:
    """The pages of `doc_id` its parse checkpoint holds (saved by a run that did not commit it)."""
    entry = plan.entry("document").name  # the stage made from the file keeps the checkpoint
    return UnitCheckpoint(wh, plan.fingerprints[entry], doc_id).stored_rows(PAGE_RESULTS)


def _pages(n: int) -> str:
    return f"{n} page{'s' if n != 1 else ''}"


def starting(wh: Warehouse, plan: Plan, to_parse: dict[str, str], pages: dict[str, int], later: int) -> str:
    """The ingest's first line. `to_parse`: path -> doc_id of the documents to parse, longest first;
    `pages`: path -> its page count; `later`: documents parsed before, with a later stage to run."""
    parts = []
    if to_parse:
        path, doc_id = next(iter(to_parse.items()))
        total = sum(pages.get(p, 0) for p in to_parse)
        saved = pages_saved(wh, plan, doc_id)
        resumed = f", {saved} of them saved by an interrupted run" if saved else ""
        if len(to_parse) == 1:
            parts.append(f"{Path(path).name}, {_pages(total)} to parse{resumed}")
        else:
            first = f"{Path(path).name} ({_pages(pages.get(path, 0))}{resumed}) first"
            parts.append(f"{len(to_parse)} documents, {_pages(total)} to parse, {first}")
    if later:
        parts.append(f"{later} document{'s' if later != 1 else ''} parsed before, to describe or index")
    return "ingest: " + "; ".join(parts)


def kept(wh: Warehouse, plan: Plan, files: dict[str, str], pages: dict[str, int]) -> str:
    """What an interrupted ingest of `files` (path -> doc_id) leaves stored: the documents every
    stage committed (or parse rejected: nothing of them is run again), and for each one begun and
    not ended what it keeps: its stages committed, or the pages its parse saved (where its rerun
    resumes)."""
    parse = plan.fingerprints[plan.entry("document").name]
    names = {doc_id: path for path, doc_id in files.items()}
    whole, partial = 0, []
    for doc_id, path in names.items():
        done = [s.name for s in plan.stages if is_committed(wh, s, plan.fingerprints[s.name], doc_id)]
        if len(done) == len(plan.stages) or wh.has_part("rejects", parse, unit_rejected_part(doc_id)):
            whole += 1
        elif done:
            partial.append(f"{Path(path).name}: {', '.join(done)} kept")
        elif saved := pages_saved(wh, plan, doc_id):
            total = f" of {pages[path]}" if pages.get(path) else ""
            partial.append(f"{Path(path).name}: {saved}{total} pages parsed, resumes there")
    n = len(names)
    return "; ".join([f"{whole} of {n} document{'s' if n != 1 else ''} kept", *partial])
