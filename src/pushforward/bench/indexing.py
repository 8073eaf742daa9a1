"""Indexing, op by op: row loops over an (n, 20) float64 array, each statement one index.

The size is the number of rows: each workload runs one statement per row, so its time per row is
the per-op cost of indexing (the figures of benchmarks/bench_indexing.py, in a loop):

- `index-read`: the slice read `a[i, 1:-1]` of every row (the views returned);
- `index-write`: the slice write `b[i, 1:-1] = b[i - 1, 1:-1]` down the rows of a copy;
- `index-write-jvp`: the same writes on dual tensors (the copy and its tangent, forward mode);
- `index-element`: the element reads `b[i, 3] + b[i, 4]`, summed over the rows.

>>> import numpy as np
>>> from pushforward.bench.indexing import write_rows
>>> write_rows(np.arange(12.0).reshape(3, 4))[:, 1:-1].tolist()
[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pushforward.autograd.forward_ad as fwAD
from .workload import Workload, inputs, tensors

__all__ = ["COLUMNS", "read_rows", "write_rows", "element_sum", "WORKLOADS"]

COLUMNS = 20


def read_rows(a: Any) -> list:
    """The slice `a[i, 1:-1]` of every row (any library's array)."""
    return [a[i, 1:-1] for i in range(a.shape[0])]


def write_rows(a: Any) -> Any:
    """A copy of a whose rows' interiors are each written from the row above (any library's array)."""
    b = a.copy() if isinstance(a, np.ndarray) else a.clone()
    for i in range(1, b.shape[0]):
        b[i, 1:-1] = b[i - 1, 1:-1]
    return b


def element_sum(a: Any) -> Any:
    """The sum over the rows of `a[i, 3] + a[i, 4]`, element by element."""
    total = a[0, 3] + a[0, 4]
    for i in range(1, a.shape[0]):
        total = total + (a[i, 3] + a[i, 4])
    return total


def _av(n: int) -> list:
    return inputs(6, (n, COLUMNS), (n, COLUMNS))


def _pf_write_jvp(a, v):
    with fwAD.dual_level():
        return fwAD.unpack_dual(write_rows(fwAD.make_dual(a, v))).tangent


def _np_write_jvp(n: int):
    a, v = _av(n)
    return lambda: (write_rows(a), write_rows(v))[1]


def _torch_write_jvp(torch, n: int):
    import torch.autograd.forward_ad as tfwAD

    a, v = (torch.from_numpy(x) for x in _av(n))

    def run():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(write_rows(tfwAD.make_dual(a, v))).tangent

    return run


_NOT_JAX = {"jax": "JAX arrays are immutable: no in-place indexing to compare with"}
_RANGE = {"max_size": 4096, "min_size": 2, "not_applicable": _NOT_JAX}


def _per_row(name: str, title: str, fn) -> Workload:
    """The workload running fn(a) on the (n, COLUMNS) array in every library."""
    return Workload(
        name,
        title,
        "rows",
        lambda n: (fn, tensors(_av(n)[0])),
        lambda n: (lambda a: lambda: fn(a))(_av(n)[0]),
        lambda torch, n: (lambda a: lambda: fn(a))(torch.from_numpy(_av(n)[0])),
        **_RANGE,
    )


WORKLOADS = [
    _per_row("index-read", f"slice reads a[i, 1:-1], one per row of an (n, {COLUMNS}) array", read_rows),
    _per_row(
        "index-write", f"slice writes b[i, 1:-1] = b[i - 1, 1:-1] down the rows of an (n, {COLUMNS}) array", write_rows
    ),
    Workload(
        "index-write-jvp",
        "the slice writes on dual tensors (forward mode)",
        "rows",
        lambda n: (_pf_write_jvp, tensors(*_av(n))),
        _np_write_jvp,
        _torch_write_jvp,
        **_RANGE,
    ),
    _per_row(
        "index-element",
        f"element reads a[i, 3] + a[i, 4], summed over the rows of an (n, {COLUMNS}) array",
        element_sum,
    ),
]
