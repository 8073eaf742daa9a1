"""The aliasing rule of op results and tangents: each owns its memory unless it is a view.

A tangent may share memory with another tensor's tangent only where the primals do: a view
and its base. A formula may return an input's tangent unchanged (``x + 1``: self_t), or a
reshape of it, or a primal; attached as it is, an in-place op on either tensor would change
the other's tangent. Every place that attaches a formula's tangent to a non-view output (the
executors of dispatch/classifier.py, dispatch/general.py and the deferred tangents of engine/pending.py) goes through
`own_array` or `own_tensor`, which copy exactly in that case. A fresh array (no base, not an
input) costs two identity tests. A non-view op's kernel result is held to the same rule
(`unshared`).

>>> import numpy as np
>>> a = np.zeros(3)
>>> own_array(a, (a,)) is a
False
"""

from __future__ import annotations

import numpy as np

from ..engine.pending import Pending
from ..core.batched import BatchedTensor, values_of
from ..core.lazy import is_immutable
from ..core.tensor import Tensor

__all__ = ["own_array", "own_tensor", "own_fast", "arrays_of", "unshared"]


def own_array(r: np.ndarray, arrays) -> np.ndarray:
    """r, or a copy of r when it may share memory with one of `arrays` (ndarrays, lists of them,
    None or scalars: the formula's inputs and the op's outputs)."""
    fresh = r.base is None
    for a in arrays:
        if type(a) is list:
            if own_array(r, a) is not r:
                return r.copy()
        elif isinstance(a, np.ndarray) and (a is r if fresh else np.may_share_memory(r, a)):
            return r.copy()
    return r


def own_fast(r: np.ndarray, datas: list, tans: list, od: np.ndarray) -> np.ndarray:
    """own_array for an array formula's result: a fresh array (no base) can only be an input
    tangent itself (formulas never return a primal unchanged: the opdb test of own_array checks it)."""
    if r.base is not None:
        return own_array(r, (*datas, *tans, od))
    for a in tans:
        if a is r:
            return r.copy()
    return r


def arrays_of(values) -> list:
    """The arrays of Tensors (or lists of them, or deferred tangents) in `values`, flattened."""
    out = []
    for v in values:
        tv = type(v)
        if tv is Tensor:
            out.append(v._data)
        elif tv is list:
            out.extend(arrays_of(v))
        elif tv is BatchedTensor:
            out.append(values_of(v))
        elif tv is Pending:
            if v.value is not None and type(v.value) is Tensor:
                out.append(v.value._data)
        elif isinstance(v, np.ndarray):  # (pf.compile's tracer passes an ndarray subclass)
            out.append(v)
    return out


def own_tensor(t: Tensor, arrays) -> Tensor:
    """t, or t.clone() (differentiable, for nested levels) when it may share memory with `arrays`."""
    d = t._data if type(t) is not BatchedTensor else values_of(t)
    if type(d) is not np.ndarray and is_immutable(d):  # (a Dask array): sharing it is harmless
        return t
    fresh = d.base is None
    for a in arrays:
        if a is d if fresh else np.may_share_memory(d, a):
            return t.clone()
    return t


def unshared(out: np.ndarray, datas) -> np.ndarray:
    """A non-view op's kernel result that is a NumPy view (einsum('ij->ji'), a reshape in the
    kernel) may alias an input: then autograd would not know that writing into the result
    writes into the input. Such a result is copied: every op returns a tracked view (view ops)
    or fresh memory. (A result that is an input itself has no base: kernels never do that.)"""
    return out.copy() if own_array(out, datas) is not out else out
