"""`make faults`: each fault the pipeline must survive, run for real, one row of a table each.

A fault module has `run(ctx: FaultContext) -> Outcome`; `python -m benchmarks.faults` runs them
all at full size and prints the table, and `tests/test_faults_*.py` runs each at CI size.
"""
