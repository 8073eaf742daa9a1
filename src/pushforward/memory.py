"""Memory: allocator tuning for large-array workloads (opt-in; Linux with glibc only), and
`peak_bytes`, the peak memory of one call (for benchmarks and tests).

Autodiff keeps many intermediates alive (the tape, tangents), so almost every result needs
fresh memory. glibc serves large blocks with mmap and returns them on free, so each new
array page-faults again; forward-over-reverse (hvp) on 100k-element arrays spends most of
its time there. `reuse_freed_memory()` keeps freed memory in the process instead.

>>> import pushforward as pf
>>> pf.memory.reuse_freed_memory()  # doctest: +SKIP
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import tracemalloc
from typing import Callable

__all__ = ["reuse_freed_memory", "peak_bytes"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def reuse_freed_memory(mmap_threshold: int = 64 << 20, trim_threshold: int = 512 << 20) -> bool:
    """Make glibc keep freed blocks for reuse (process-wide). Returns False where unsupported.

    Blocks below `mmap_threshold` bytes come from the heap, and up to `trim_threshold` bytes of
    free heap are kept rather than returned to the OS. The cost is a larger resident size.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(
        mallopt(_M_TRIM_THRESHOLD, int(trim_threshold))
    )


def peak_bytes(fn: Callable[[], object], warmup: bool = True) -> int:
    """Peak memory traced (NumPy's arrays included) during one call of fn, after a warm-up call.

    >>> import numpy as np
    >>> peak_bytes(lambda: np.zeros(1000)) >= 8000
    True
    """
    if warmup:
        fn()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
