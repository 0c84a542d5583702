"""Fault: the describe / generate model server down, answering 500, answering garbage, too slow.

One real OpenAI-compatible server on loopback (tests/support/openai_server.py: it checks every request as
the Chat Completions API defines it) answers healthy runs from the start to the end, on one port,
so that the describe fingerprint (which names the server's URL) is the same in every run. Its
script turns it bad for one command: every request answered 500, answered 200 with a body that is
not JSON, answered 200 with JSON that is not a chat completion, or answered after 1 s against a
0.5 s timeout; "down" closes it (nothing listening) and opens it again on the same port after.

A case is one mode during one stage: describe during `interleaf ingest` of a short document with
figures into a warehouse holding another, or generate during `interleaf answer` / `interleaf ask`
over an ingested warehouse. It survives when the bad command ends within BOUND_S, exits non-zero
with one clear line naming the server's URL and the reason, prints no traceback, leaves the views
as they were, and the same command once the server is healthy ends as a run against a healthy
server from the start (rows_lost: the rows that differ, both ways).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.faults.common import (
    Cli,
    FaultContext,
    Outcome,
    contents,
    interleaf,
    rows_added,
    rows_lost,
)

MODEL = "faults-vlm"
BOUND_S = 240.0  # a faulted command must end within this (a healthy one takes ~30 s here)
FAULT_TIMEOUT_S = 0.5  # the chat timeout set for a faulted command; "slow" answers after 1 s
# what the script of tests/support/openai_server.py answers in each mode (down: nothing listening)
SCRIPT = {"500": "500", "not_json": "garbage", "wrong_shape": "shape", "slow": "sleep"}
REASON = {  # what the error line says for each mode
    "down": "no server answers",
    "500": "HTTP 500",
    "not_json": "malformed response",
    "wrong_shape": "malformed response",
    "slow": "timeout",
}
MODES = tuple(REASON)
# (stage, mode, command). CI size: each mode once (garbage as a body that is not JSON), over both
# stages and both answer commands; full size: every mode during each stage, `answer` and `ask` in turn
CASES = {
    "ci": [
        ("describe", "down", "ingest"),
        ("describe", "not_json", "ingest"),
        ("generate", "500", "answer"),
        ("generate", "slow", "ask"),
    ],
    "full": [("describe", mode, "ingest") for mode in MODES]
    + [("generate", mode, ("answer", "ask")[i % 2]) for i, mode in enumerate(MODES)],
}
KEPT = "layoutparser-table-page.pdf"  # in the warehouse before the faulted ingest (1 table; parsed in ~1 s)
ADDED = "corrosion-plot-table.pdf"  # ingested during the fault (3 image quotes)
# the answer views, without what names a run or a time
ANSWER_QUERIES = {
    "answers": "select * exclude (seconds, created_at) from answers",  # when and how long: not what
    "citations": "select * from citations",
}


def reply(seen: object) -> str:
    """Deterministic per request, so a healed run and a healthy one store the same text."""
    images = getattr(seen, "images", [])
    if images:
        return f"A figure or table; its pixels hash to {hashlib.sha256(images[0]).hexdigest()[:12]}."
    digest = hashlib.sha256(getattr(seen, "prompt", "").encode()).hexdigest()[:8]
    return f"The documents answer it [1]. Answer {digest}."


class ModelServer:
    """The loopback server on one port for the whole fault, switched between healthy and bad."""

    def __init__(self) -> None:
        from tests.support.openai_server import OpenAIServer

        self._make = lambda port: OpenAIServer(MODEL, None, reply, port=port)
        self.server = self._make(0)
        self.port = self.server.server_address[1]
        self._start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _start(self) -> None:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bad(self, mode: str) -> None:
        if mode == "down":
            self.close()
        else:
            self.server.script = [SCRIPT[mode]] * 100_000

    def healthy(self) -> None:
        if self.server is None:
            self.server = self._make(self.port)  # the same port: the describe fingerprint names it
            self._start()
        self.server.script = []

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def settings(stage: str, base_url: str, faulted: bool) -> list[str]:
    """`--set` overrides: the stage's backend at the server; few quick retries; on a faulted
    command a short timeout (not in any fingerprint, like retries and backoff)."""
    section = "describe.openai" if stage == "describe" else "generate.openai"
    values = {
        "describe.describer" if stage == "describe" else "generate.backend": "openai",
        f"{section}.base_url": base_url,
        f"{section}.model": MODEL,
        f"{section}.retries": "1",
        f"{section}.backoff_s": "0.05",
    }
    if faulted:
        values[f"{section}.timeout_s"] = str(FAULT_TIMEOUT_S)
    return [a for key, value in values.items() for a in ("--set", f"{key}={value}")]


def view_contents(warehouse: Path) -> dict[str, Counter[tuple]]:
    """The ingest views and the answer views (none yet before the first answer)."""
    from benchmarks.faults.common import _hashable
    from warehouse import Warehouse
    from warehouse.catalog import connect

    got = contents(warehouse)
    con = connect(Warehouse(warehouse))
    try:
        for table, sql in ANSWER_QUERIES.items():
            try:
                got[table] = Counter(_hashable(r) for r in con.execute(sql).fetchall())
            except Exception:  # duckdb: no such view until an answer run published one
                got[table] = Counter()
    finally:
        con.close()
    return got


def differences(reference: dict[str, Counter[tuple]], got: dict[str, Counter[tuple]]) -> int:
    return rows_lost(reference, got) + rows_added(reference, got)


def copy_warehouse(source: Path, ctx: FaultContext, name: str) -> Path:
    target = ctx.scratch(name) / "warehouse"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("catalog.duckdb*"))
    return target


@dataclass
class Reference:
    views: dict[str, Counter[tuple]]
    answer: dict | None = None  # `ask --json`'s answer


@dataclass
class Setup:
    server: ModelServer
    base: Path  # KEPT ingested
    parsed: Path  # and ADDED parsed, not described: its ingest met the server down (views as in base)
    full: Path  # KEPT and ADDED ingested, healthy: the reference of an ingest and the base of answers
    qa: Path  # the questions `answer` is asked (qa_dev's about ADDED)
    question: str  # the question `ask` is asked
    references: dict[str, Reference] = field(default_factory=dict)  # command -> its healthy run


@dataclass(frozen=True)
class CaseResult:
    name: str  # stage, mode and command
    problems: list[str]  # empty: survived
    rows_lost: int
    error_line: str  # what the faulted command said
    seconds: float  # the faulted command's


def judge_failure(cli: Cli, mode: str, base_url: str) -> list[str]:
    """Why a faulted command's ending is not the promised one (empty: as promised)."""
    said = cli.stdout + cli.stderr
    problems = []
    if cli.returncode == 0:
        problems.append("exit code 0")
    if cli.seconds > BOUND_S:
        problems.append(f"took {cli.seconds:.0f} s")
    if "Traceback (most recent call last)" in said:
        problems.append("a traceback reached the terminal")
    if base_url not in said:
        problems.append(f"the error does not name {base_url}")
    if REASON[mode] not in said:
        problems.append(f"the error does not say {REASON[mode]!r}")
    return problems


def error_line(cli: Cli, base_url: str) -> str:
    """The line that names the server: the error, or an ingest's progress line for the document
    (whole, where the report's table wraps it)."""
    for text in (cli.stderr, cli.stdout):
        for line in text.splitlines():
            if base_url in line:
                return line.strip(" │\r")
    return (cli.stdout + cli.stderr).strip()[-300:]


def command_args(setup: Setup, ctx: FaultContext, command: str) -> list[str]:
    if command == "ingest":
        return ["ingest", str(ctx.corpus / "docs" / ADDED)]
    if command == "answer":
        return ["answer", "--qa", str(setup.qa)]
    return ["ask", "--json", "--doc", ADDED, setup.question]


def server_args(server: ModelServer, stage: str, faulted: bool) -> list[str]:
    """Every command of this fault describes through the server (the describe fingerprint is the
    same in all of them); generate commands also answer through it."""
    args = settings("describe", server.base_url, faulted and stage == "describe")
    if stage == "generate":
        args += settings("generate", server.base_url, faulted)
    return args


def healthy(warehouse: Path, args: list[str], what: str, server: ModelServer, stage: str) -> Cli:
    cli = interleaf(warehouse, *server_args(server, stage, faulted=False), *args, timeout=BOUND_S + 60)
    if cli.returncode != 0:
        raise RuntimeError(f"{what} against a healthy server failed: {cli.stdout[-500:]} {cli.stderr[-1500:]}")
    return cli


def reference(ctx: FaultContext, setup: Setup, command: str) -> Reference:
    """The command against a healthy server from the start (once per command)."""
    if command == "ingest":
        return Reference(view_contents(setup.full))
    if command not in setup.references:
        warehouse = copy_warehouse(setup.full, ctx, f"reference-{command}")
        cli = healthy(warehouse, command_args(setup, ctx, command), command, setup.server, "generate")
        answer = answer_of(cli) if command == "ask" else None
        setup.references[command] = Reference(view_contents(warehouse), answer)
    return setup.references[command]


def answer_of(cli: Cli) -> dict:
    return json.loads(cli.stdout.strip().splitlines()[-1])


def run_case(ctx: FaultContext, setup: Setup, stage: str, mode: str, command: str) -> CaseResult:
    """One mode during one stage's command: the faulted command, then the same once healthy."""
    server = setup.server
    name = f"{stage} {mode} ({command})"
    expected = reference(ctx, setup, command)
    warehouse = copy_warehouse(setup.parsed if stage == "describe" else setup.full, ctx, name.replace(" ", "-"))
    args = command_args(setup, ctx, command)
    before = view_contents(warehouse)
    faulted_args = server_args(server, stage, faulted=True)
    server.bad(mode)
    try:
        faulted = interleaf(warehouse, *faulted_args, *args, timeout=BOUND_S + 60)
    finally:
        server.healthy()
    problems = judge_failure(faulted, mode, server.base_url)
    changed = differences(before, view_contents(warehouse))
    if changed:
        problems.append(f"the views changed: {changed} rows differ from before")
    healed = interleaf(warehouse, *server_args(server, stage, faulted=False), *args, timeout=BOUND_S + 60)
    if healed.returncode != 0:
        problems.append(f"the rerun once healthy exited {healed.returncode}: {(healed.stdout + healed.stderr)[-300:]}")
    differ = differences(expected.views, view_contents(warehouse))
    if expected.answer is not None and healed.returncode == 0 and answer_of(healed) != expected.answer:
        problems.append("the rerun's answer differs from a healthy run's")
        differ += 1
    if differ:
        problems.append(f"the rerun differs from a healthy run by {differ} rows")
    return CaseResult(name, problems, changed + differ, error_line(faulted, server.base_url), faulted.seconds)


def prepare(ctx: FaultContext, server: ModelServer) -> Setup:
    """KEPT ingested; then ADDED parsed during an ingest that met the server down (the describe
    cases start from there: parsing is not what they are about, and it is the slow part); then
    ADDED ingested healthy: the reference every describe case must end equal to."""
    docs = ctx.corpus / "docs"
    base = ctx.scratch("base") / "warehouse"
    healthy(base, ["ingest", str(docs / KEPT)], f"ingest {KEPT}", server, "describe")
    parsed = copy_warehouse(base, ctx, "parsed")
    server.bad("down")
    try:
        cli = interleaf(parsed, *server_args(server, "describe", True), "ingest", str(docs / ADDED))
    finally:
        server.healthy()
    if cli.returncode == 0 or differences(view_contents(base), view_contents(parsed)):
        raise RuntimeError(f"an ingest with the describe server down did not fail cleanly: {cli.stdout[-500:]}")
    full = copy_warehouse(parsed, ctx, "full")
    healthy(full, ["ingest", str(docs / ADDED)], f"ingest {ADDED}", server, "describe")
    qa = ctx.workdir / "questions.jsonl"
    rows = [json.loads(line) for line in (ctx.corpus / "qa_dev.jsonl").read_text().splitlines() if line.strip()]
    asked = [r for r in rows if r["doc"] == ADDED]
    qa.write_text("".join(json.dumps(r) + "\n" for r in asked))
    return Setup(server, base, parsed, full, qa, asked[0]["question"])


def run(ctx: FaultContext) -> Outcome:
    return run_cases(ctx)[0]


def run_cases(ctx: FaultContext) -> tuple[Outcome, list[CaseResult]]:
    server = ModelServer()
    cases = CASES[ctx.size]
    results: list[CaseResult] = []
    try:
        setup = prepare(ctx, server)
        for stage, mode, command in cases:
            results.append(run_case(ctx, setup, stage, mode, command))
    finally:
        server.close()
    failures = [f"{r.name}: {'; '.join(r.problems)}" for r in results if r.problems]
    slowest = max((r.seconds for r in results), default=0.0)
    detail = f"{', '.join(r.name for r in results)}; slowest faulted command {slowest:.0f} s"
    outcome = Outcome(
        "model server down / 500 / garbage / slow",
        len(cases),
        sum(not r.problems for r in results),
        sum(r.rows_lost for r in results),
        detail,
        failures,
    )
    return outcome, results
