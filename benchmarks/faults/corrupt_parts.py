"""A Parquet part damaged on disk (truncated, bytes flipped): found when read, reported, computed again.

A reference ingest of two short documents is copied once per case; one published part of a
document table (picked with the seed) is truncated or has bytes flipped. A question asked then
must fail with one line naming the part (no traceback), or answer exactly as before when it read no
damaged part; the same
ingest run again must report the part, set it aside and compute it again, and end with the
reference's rows.
"""

from __future__ import annotations

import functools
import random
import shutil
from pathlib import Path

from benchmarks.faults.common import FaultContext, Outcome, contents, interleaf, rows_added, rows_lost

DOCS = ["figures-example.pdf", "corrosion-plot-table.pdf"]
# the document tables whose parts a question or an ingest reads (the ledger is history, not data)
TABLES = ["documents", "pages", "quotes", "sections", "quote_texts", "index_texts", "quote_embeddings", "rejects"]
QUESTION = "What does the polarization curve show?"


def damage(path: Path, rng: random.Random) -> str:
    """Truncate the file or flip 1-8 of its bytes, in place (a new inode: a writer's rename would be
    one too); -> what was done."""
    data = bytearray(path.read_bytes())
    if rng.random() < 0.4:
        keep = rng.randrange(len(data))
        what = f"truncated to {keep} of {len(data)} bytes"
        data = data[:keep]
    else:
        spots = sorted(rng.sample(range(len(data)), rng.randint(1, 8)))
        for at in spots:
            data[at] ^= rng.randrange(1, 256)
        what = f"{len(spots)} bytes flipped of {len(data)}"
    path.unlink()
    path.write_bytes(bytes(data))
    return what


def published_parts(root: Path) -> list[Path]:
    from warehouse import Warehouse

    wh = Warehouse(root)
    return [p for table in TABLES for p in wh.published_files(table)]


def run(ctx: FaultContext) -> Outcome:
    files = [str(ctx.corpus / "docs" / name) for name in DOCS]
    reference = ctx.scratch("reference") / "warehouse"
    first = interleaf(reference, "ingest", *files)
    if first.returncode != 0:
        failed = f"the reference ingest failed: {first.stderr[-500:]}"
        return Outcome("corrupt Parquet part", 0, 0, 0, failures=[failed])
    expected = contents(reference)
    # what a question gets when it reads no damaged part: asked only when needed (models load slowly)
    answer = functools.cache(lambda: interleaf(reference, "ask", QUESTION).stdout)
    candidates = published_parts(reference)
    rng = random.Random(ctx.seed)
    cases = 2 if ctx.size == "ci" else 12
    quotes = [p for p in candidates if p.parent.parent.name == "quotes"]
    first_pick = rng.choice(quotes)  # the first case hits a part every question reads, then any part
    picked = [first_pick, *rng.sample([p for p in candidates if p != first_pick], min(cases, len(candidates)) - 1)]
    survived, lost, failures, asked, refusals = 0, 0, [], 0, 0
    for i, original in enumerate(picked):
        root = ctx.workdir / f"case-{i}" / "warehouse"
        shutil.copytree(reference, root, symlinks=True)
        part = root / original.relative_to(reference)
        what = damage(part, rng)
        label = f"{part.relative_to(root)} ({what})"
        problems = []
        if i < (1 if ctx.size == "ci" else 3):  # a question before the repair (a few: models load slowly)
            asked += 1
            ask = interleaf(root, "ask", QUESTION)
            refused = ask.returncode != 0 and f"corrupt part {part}" in ask.stderr and "Traceback" not in ask.stderr
            if refused:
                refusals += 1
            elif ask.returncode != 0 or ask.stdout != answer():  # an answer must be the undamaged one
                problems.append(
                    f"ask exited {ask.returncode}, neither refused naming the part nor answered as "
                    f"before: {ask.stderr[-400:]}"
                )
        rerun = interleaf(root, "ingest", *files)
        if rerun.returncode != 0 or "Traceback" in rerun.stderr:
            problems.append(f"the rerun exited {rerun.returncode}: {rerun.stderr[-400:]}")
        if f"corrupt part {part}" not in rerun.stderr:
            problems.append("the rerun did not report the part")
        if not part.exists() or not any((root / "_corrupt").rglob(f"{part.name}.*")):
            problems.append("the part was not computed again, or the damaged one not set aside")
        got = contents(root)
        lost += rows_lost(expected, got)
        if rows_added(expected, got):
            problems.append(f"{rows_added(expected, got)} rows more than the reference")
        if problems:
            failures.append(f"{label}: {'; '.join(problems)}")
        else:
            survived += 1
        shutil.rmtree(root.parent)
    tables = sorted({p.parent.parent.name for p in picked})
    detail = (
        f"parts of {', '.join(tables)}; asked before the repair: {refusals} of {asked} refused naming the part, "
        "the others read no damaged part and answered as before"
    )
    return Outcome("corrupt Parquet part", len(picked), survived, lost, detail, failures)
