"""`make faults`: every fault at full size, one table (fault, cases, survived, rows lost).

python -m benchmarks.faults --corpus ../shared/corpus [--size ci|full] [--only NAME ...]
Exit 1 when a fault did not survive every case or lost a row.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.faults.common import FaultContext, Outcome
from benchmarks.stopping import exit_on_sigterm

# module names under benchmarks/faults, in the order the table shows them
FAULTS = [
    "fuzz_pdfs",
    "kill9",
    "kill9_compaction",
    "model_server",
    "corrupt_parts",
    "disk_full",
    "answers_during_ingest",
]


def table(outcomes: list[Outcome]) -> str:
    head = ("fault", "cases", "survived", "rows lost", "detail")
    rows = [(o.fault, str(o.cases), str(o.survived), str(o.rows_lost), o.detail) for o in outcomes]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head[:4], widths, strict=True)) + "  " + head[4]]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4] for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make faults", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--size", choices=["ci", "full"], default="full")
    parser.add_argument("--only", nargs="*", choices=FAULTS, default=FAULTS)
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    exit_on_sigterm()  # the commands the faults run in groups of their own are stopped at exit (common.py)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="interleaf-faults-") as scratch:
        for name in args.only:
            started = time.perf_counter()
            module = importlib.import_module(f"benchmarks.faults.{name}")
            ctx = FaultContext(args.corpus.resolve(), Path(scratch) / name, args.size, args.seed)
            ctx.workdir.mkdir(parents=True)
            outcome = module.run(ctx)
            outcomes.append(outcome)
            print(
                f"{outcome.fault}: {outcome.survived}/{outcome.cases} survived, {outcome.rows_lost} rows lost "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
            for line in outcome.failures:
                print(f"  not survived: {line}", file=sys.stderr)
    print(table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
