"""Handing freed memory back to the system.

glibc's malloc keeps what a process freed for its next allocations, and a long-lived process
whose allocations vary in size (ONNX Runtime's activations, one shape per input) keeps growing:
a page worker reading the 126 raster crops of docs/ + scale/ held 192 MB after its first read and
1,048 MB after the last, though no read needed more than ~500 MB above what it started with.
`malloc_trim` returns the free pages; the next allocations fault them in again, which costs time,
so it is called after a batch of work, not after each allocation.

Arrow's buffers come from its own pool (mimalloc), which keeps freed pages for itself the same way:
the command's process held 81 MB more after indexing the 619-page manual until the pool released them.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys


def return_freed_memory() -> None:
    if "pyarrow" in sys.modules:  # a process that never loaded Arrow has no pool to empty
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # not glibc: musl has no malloc_trim
            ctypes.CDLL("libc.so.6").malloc_trim(0)
