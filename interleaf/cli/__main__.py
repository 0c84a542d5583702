"""`python -m interleaf.cli`."""

from interleaf.cli import run

run()
