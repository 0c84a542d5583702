"""interleaf.runtime.heap: what a long-lived process hands back after a unit of work."""

from __future__ import annotations

import subprocess
import sys

import pytest

ARROW_HELD = """
import numpy as np
import pyarrow as pa
from interleaf.runtime.heap import return_freed_memory


def rss_mb() -> int:
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20


start = rss_mb()
tables = [
    pa.table({"v": np.arange(i, i + 100_000, dtype=np.float64), "s": [str(j % 997) for j in range(100_000)]})
    for i in range(200)
]
built = rss_mb() - start
del tables
return_freed_memory()
print(built, rss_mb() - start)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_freed_arrow_buffers_go_back_to_the_system() -> None:
    """Arrow's buffers come from its own pool (mimalloc), which keeps freed pages as malloc does: ~400
    MB of tables built and dropped, the process must not keep most of them."""
    proc = subprocess.run([sys.executable, "-c", ARROW_HELD], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    built, held = map(int, proc.stdout.split())
    assert built > 200 and held < built / 4, (built, held)
