"""What func's transforms and autograd.functional share: one-hot bases, the loop of forward passes
(one per input element), the assembly of Jacobian blocks, and the refusal of a result the tape
cannot see through.

A block for output ``o`` and input ``x`` has shape ``o.shape + x.shape``.

>>> import pushforward as pf
>>> onehot((2, 2), pf.float64, 3)
tensor([[0., 0.],
        [0., 1.]])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.batched import BatchedTensor, physical, unbatched
from ..dispatch.interpret import resolve
from ..errors import NestingError
from ..ops import generated as ops
from ..core.creation import from_numpy, zeros, zeros_like
from ..core.tensor import Tensor

__all__ = [
    "onehot",
    "forward_columns",
    "forward_block",
    "zero_forward_block",
    "reverse_block",
    "basis_rows",
    "split_columns",
    "split_rows",
    "unbatch",
    "check_not_interpreted",
]


def onehot(shape: tuple, dtype: Any, k: int) -> Tensor:
    """The k-th (row-major) basis tensor of the given shape and dtype."""
    a = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.dtype(dtype))
    a[k] = 1
    return from_numpy(a.reshape(shape))


def forward_columns(run: Callable, sizes: list) -> tuple[Any, list]:
    """Run ``run(j, k)`` for every element k of every input j (sizes[j] None: skip input j).

    ``run`` returns ``(info, tangents)``; the result is ``(info of the first run, cols)`` with
    ``cols[j][k]`` the tangents. With no element at all, ``run(None, 0)`` gives the info.
    """
    first = None
    cols: list = []
    for j, size in enumerate(sizes):
        cols.append([])
        if size is None:
            continue
        for k in range(size):
            info, tans = run(j, k)
            if first is None:
                first = (info,)
            cols[j].append(tans)
    if first is None:
        first = (run(None, 0)[0],)
    return first[0], cols


def forward_block(tans: list, out: Tensor, x: Tensor) -> Tensor | None:
    """Block from the output's tangents along each basis direction of x (columns stacked last);
    None when every tangent is None (the output is independent of x)."""
    if all(t is None for t in tans):
        return None
    ts = [t if t is not None else zeros_like(out.detach()) for t in tans]
    return ops.stack(ts, -1).reshape(tuple(out.shape) + tuple(x.shape))


def zero_forward_block(out: Tensor, x: Tensor) -> Tensor:
    """The block of an output independent of x (dtype: their common type)."""
    return zeros(tuple(out.shape) + tuple(x.shape), dtype=np.result_type(out.dtype, x.dtype))


def reverse_block(rows: list, out: Tensor, x: Tensor) -> Tensor:
    """Block from the gradients of each output element (rows stacked first)."""
    shape = tuple(out.shape) + tuple(x.shape)
    if not rows:
        return zeros(shape, dtype=x.dtype)
    return ops.stack(rows, 0).reshape(shape)


# -- vector mode: every basis tangent in one batched pass ---------------------------------------


def basis_rows(leaves: list, sizes: list, start: int, stop: int) -> dict:
    """The basis tangents start..stop-1 (counting the elements of all leaves, in order) as batches:
    {leaf index: tangent of shape (stop - start, *leaf.shape)} for the leaves that have one of
    those directions (rows of an identity matrix; the other rows zero)."""
    batch = stop - start
    out = {}
    offset = 0
    for j, (leaf, n) in enumerate(zip(leaves, sizes)):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo < hi:
            rows = np.zeros((batch, n), dtype=np.dtype(leaf.dtype))
            rows[np.arange(lo - start, hi - start), np.arange(lo - offset, hi - offset)] = 1
            out[j] = from_numpy(rows.reshape((batch,) + tuple(leaf.shape)))
        offset += n
    return out


def split_columns(tan: Tensor, out: Tensor, leaves: list, sizes: list) -> list:
    """The Jacobian blocks of one output from its tangents along every basis direction (tan has
    shape (N, *out.shape), rows in leaf order; sizes[j] 0 for a leaf not differentiated: its block
    is None). Block j has shape out.shape + leaves[j].shape."""
    blocks = []
    offset = 0
    for leaf, n in zip(leaves, sizes):
        if not n:
            blocks.append(None if leaf.dtype.kind not in "fc" else zero_forward_block(out, leaf))
            continue
        rows = tan[offset : offset + n].reshape((n, -1))
        blocks.append(rows.transpose(0, 1).reshape(tuple(out.shape) + tuple(leaf.shape)))
        offset += n
    return blocks


def split_rows(rows: Tensor | None, outs: list, sizes: list, x: Tensor) -> list:
    """The Jacobian blocks of input x, one per output, from the gradients along every output
    element (rows: (N, *x.shape), rows in output order; None: x is independent of every output).
    Block i has shape outs[i].shape + x.shape (split_columns' twin for reverse mode)."""
    blocks = []
    offset = 0
    for o, n in zip(outs, sizes):
        shape = tuple(o.shape) + tuple(x.shape)
        blocks.append(
            zeros(shape, dtype=x.dtype) if rows is None or not n else rows[offset : offset + n].reshape(shape)
        )
        offset += n
    return blocks


def unbatch(g: Tensor, level: int, batch: int) -> Tensor:
    """A gradient of a batched pass (batch level `level`) as its (batch, ...) tensor; one that does
    not depend on the batch (zeros for an unused input) is expanded."""
    if batch == 1 and not (type(g) is BatchedTensor and g._blevel == level):  # a one-row pass runs unbatched
        return g.unsqueeze(0)
    return physical(g, level, batch)


def check_not_interpreted(leaves: list, who: str) -> None:
    """The tape cannot see through a tensor of an enclosing interpreted transform (a Taylor series
    of jet): refuse it rather than differentiate a constant (jet catches this and runs f by nested
    dual levels instead). A batch of interpreted tensors (vmap inside jet) is looked into: the
    batching interpreter hands its ops on to the series interpreter, which the tape cannot see."""
    it = resolve([unbatched(v) for v in leaves])
    if it is not None and it.level == "interpreted":  # (vmap's physical tensors and Dask's carry the tape)
        raise NestingError(
            f"{who}: the function's result is interpreted by {type(it).__name__} (an enclosing transform such "
            "as jet); reverse mode cannot differentiate through it"
        )
