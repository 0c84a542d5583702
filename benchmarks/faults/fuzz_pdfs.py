"""Fault: fuzzed PDFs. Damaged extracts of the corpus (byte flips, truncation, damaged xref and
streams) and the named hostile files (a decompression bomb, deep nesting, a page-tree loop, a
10,000-page file), ingested in one batch with two untouched control documents. Each fuzzed file
must end as a document with quotes or as a reject with its reason, within the document timeout;
the batch goes on, and the controls' rows equal those of an ingest of the controls alone."""

from __future__ import annotations

import hashlib
import random
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from benchmarks.faults.common import Cli, FaultContext, Outcome, contents, interleaf, rows_lost
from benchmarks.faults.fuzz_mutations import MUTATIONS, extract
from benchmarks.faults.fuzz_specials import SPECIALS

FAULT = "fuzzed PDFs"
CONTROLS = ("backus-1977-page.pdf", "corrosion-plot-table.pdf")
RANDOM_CASES = {"ci": 8, "full": 296}  # full: 300 files with the 4 specials
# A page gets PAGE_TIMEOUT_S (the bomb's 16 GiB, which took minutes at every pass over them, are
# now counted and refused before MuPDF reads the page: interleaf/pdf/inflation.py), a document
# DOC_TIMEOUT_S; a file is "within the timeout" when its parse ended by FILE_BOUND_S. 120 s is the
# configured default. (At 60 s a control page was once killed while the bomb held a worker on a
# loaded 2-core machine: a page's clock then started when its document waited for it, counting its
# time queued behind the other document's pages; it now starts in the worker, interleaf/runtime/executor.py.)
PAGE_TIMEOUT_S = 120
DOC_TIMEOUT_S = 240
FILE_BOUND_S = DOC_TIMEOUT_S + 30
LIMITS = ("--set", f"parse.limits.page_timeout_s={PAGE_TIMEOUT_S}", "--set", f"parse.limits.timeout_s={DOC_TIMEOUT_S}")
# `parse NAME: STATUS, ... (SECONDS s)`: the line each finished unit prints to a non-terminal stderr
_UNIT_LINE = re.compile(r"^parse (?P<name>\S+): (?P<status>\w+).*\((?P<seconds>[\d.]+) s\)$", re.M)


@dataclass(frozen=True)
class Case:
    name: str  # the file's name in the batch
    kind: str  # a mutation of MUTATIONS or a special of SPECIALS


@dataclass(frozen=True)
class Ending:
    """How one file ended: its quotes (None: no documents row) and its rejects' reasons."""

    quotes: int | None
    reasons: tuple[str, ...]
    seconds: float | None  # its parse, from the ingest's unit line (None: no line)

    @property
    def survived(self) -> bool:
        explained = bool(self.quotes) or any(r.strip() for r in self.reasons)
        return explained and self.seconds is not None and self.seconds <= FILE_BOUND_S


def _text_sources(corpus: Path) -> list[Path]:
    """Corpus documents whose first page has a text layer (parsed without OCR: cheap), controls aside."""
    sources = []
    for path in sorted((corpus / "docs").glob("*.pdf")):
        if path.name in CONTROLS:
            continue
        with pymupdf.open(path) as doc:
            if doc[0].get_text().strip():
                sources.append(path)
    return sources


def make_cases(ctx: FaultContext, batch: Path) -> list[Case]:
    """The fuzzed files, written into `batch`: the specials, then seeded mutations of 1-2 page
    extracts. Each file's bytes differ from every other's (a duplicate would be one document)."""
    rng = random.Random(ctx.seed)
    cases, seen = [], set()

    def write(name: str, kind: str, data: bytes) -> None:
        (batch / name).write_bytes(data)
        seen.add(hashlib.sha256(data).digest())
        cases.append(Case(name, kind))

    for kind, make in SPECIALS.items():
        write(f"special-{kind}.pdf", kind, make())
    sources = [pymupdf.open(p) for p in _text_sources(ctx.corpus)]
    extracts: dict[tuple[int, int, int, bool], bytes] = {}
    try:
        for i in range(RANDOM_CASES[ctx.size]):
            kind = sorted(MUTATIONS)[i % len(MUTATIONS)]  # every kind as often as the others
            while True:
                s = rng.randrange(len(sources))
                key = (s, rng.randrange(min(sources[s].page_count, 4)), rng.choice([1, 2]), rng.random() < 0.7)
                if key not in extracts:
                    extracts[key] = extract(sources[s], key[1], key[2], key[3])
                data = MUTATIONS[kind](extracts[key], rng)
                if hashlib.sha256(data).digest() not in seen:
                    break
            stem = Path(sources[s].name).stem[:24]
            write(f"{i:03d}-{kind}-{stem}-p{key[1] + 1}.pdf", kind, data)
    finally:
        for doc in sources:
            doc.close()
    return cases


def _endings(warehouse: Path, stderr: str) -> dict[str, Ending]:
    from warehouse import Warehouse
    from warehouse.catalog import connect

    con = connect(Warehouse(warehouse))
    try:
        quotes = dict(
            con.execute(
                "select d.name, count(q.quote_id) from documents d left join quotes q using (doc_id) group by 1"
            ).fetchall()
        )
        reasons: dict[str, list[str]] = {}
        for path, reason in con.execute("select path, reason from rejects where path is not null").fetchall():
            reasons.setdefault(Path(path).name, []).append(reason or "")
    finally:
        con.close()
    seconds: dict[str, float] = {}
    for line in _UNIT_LINE.finditer(stderr):
        seconds[line["name"]] = max(seconds.get(line["name"], 0.0), float(line["seconds"]))
    names = set(quotes) | set(reasons) | set(seconds)
    return {n: Ending(quotes.get(n), tuple(reasons.get(n, ())), seconds.get(n)) for n in names}


def run(ctx: FaultContext) -> Outcome:
    batch = ctx.scratch("batch")
    cases = make_cases(ctx, batch)
    controls = [batch / name for name in CONTROLS]
    for path in controls:
        shutil.copyfile(ctx.corpus / "docs" / path.name, path)

    # the controls alone, from the same paths (a reject row names its file's path)
    reference_wh = ctx.workdir / "reference"
    ref = interleaf(reference_wh, *LIMITS, "ingest", *map(str, controls))
    if ref.returncode != 0:
        raise RuntimeError(f"the controls' reference ingest failed:\n{ref.stdout}\n{ref.stderr}")
    reference = contents(reference_wh)
    quoted = {row[1] for row in reference["quotes"]}  # (quote_id, doc_id, ...)
    if len(quoted) < len(CONTROLS):  # a control cut by a limit would compare nothing
        raise RuntimeError(
            f"the controls' reference ingest kept quotes of {len(quoted)} of {len(CONTROLS)}:\n{ref.stderr}"
        )

    warehouse = ctx.workdir / "warehouse"
    try:  # a bound on the whole batch, far past what it takes: a hang is a failure, not a stuck suite
        ingest = interleaf(warehouse, *LIMITS, "ingest", str(batch), timeout=600 + 10 * len(cases))
    except subprocess.TimeoutExpired as exc:
        ingest = Cli(
            -9, str(exc.stdout or ""), f"{exc.stderr or ''}\nhung: killed after {exc.timeout:g} s", exc.timeout
        )
    failures = []
    if ingest.returncode != 0:
        tail = (ingest.stderr.strip().splitlines() or ["(no output)"])[-1]
        failures.append(f"the batch ingest exited {ingest.returncode}: {tail}")
    endings = _endings(warehouse, ingest.stderr)
    survived = 0
    for case in cases:
        ending = endings.get(case.name)
        if ending is not None and ending.survived and ingest.returncode == 0:
            survived += 1
        else:
            failures.append(f"{case.name} ({case.kind}): {ending or 'no documents row, no reject, no unit line'}")
    lost = rows_lost(reference, contents(warehouse)) + sum(1 for c in cases if not _explained(endings.get(c.name)))

    ingested = sum(1 for c in cases if (e := endings.get(c.name)) and e.quotes)
    rejected = sum(1 for c in cases if (e := endings.get(c.name)) and e.reasons)
    slowest = max(((e.seconds or 0.0, n) for n, e in endings.items()), default=(0.0, "-"))
    kinds = Counter(c.kind for c in cases)
    detail = (
        f"{ingested} with quotes, {rejected} with rejects; slowest {slowest[1]} {slowest[0]:.1f} s; "
        f"batch {ingest.seconds:.0f} s; " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    return Outcome(FAULT, len(cases), survived, lost, detail, failures)


def _explained(ending: Ending | None) -> bool:
    """Whether a file ended as quotes or a reason: one that did not is a lost file."""
    return ending is not None and (bool(ending.quotes) or any(r.strip() for r in ending.reasons))
