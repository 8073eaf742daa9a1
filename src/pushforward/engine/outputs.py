"""The per-output rules (docs/design.md, "Per-output rules"): what every op result and its
tangent obey, whichever executor, interpreter or deferred tangent computed them.

- **fit**: a tangent has its output's shape and dtype (a formula's smaller tangent is broadcast,
  a complex tangent of a real output gives its real part); an integer or bool output carries
  none (docs/design.md, "Tangents"). `fit_tangent` for a Tensor formula's tangent (with
  differentiable ops, for nested levels), `fit_array` for an array formula's; one message for a
  shape that cannot be fitted (`_check_shape`).
- **own memory**: a result and its tangent own their memory unless the op is a view. A formula
  may return an input's tangent unchanged (``x + 1``: self_t), a reshape of it, or a primal;
  attached as it is, an in-place op on either tensor would change the other's tangent, so it is
  copied exactly in that case (`own_array`, `own_fast`, `own_tensor`); a fresh array (no base,
  not an input) costs two identity tests. A non-view op's kernel result is held to the same
  rule (`unshared`).
- **laid out as the result**: a tangent is laid out in memory as its output, so a view the
  result allows works on its tangent too: an element-wise op's tangent takes the result's
  strides (`laid_out`, wrapped around the generated formulas), and an op whose YAML entry says
  `layout: contiguous` or `layout: column_major` has its formulas wrapped to give that layout
  (`lay_out`, applied by the `Op` record). docs/design.md, "Memory layout", says which ops.

>>> import numpy as np
>>> a = np.zeros(3)
>>> own_array(a, (a,)) is a
False
>>> fit_array(None, 1.0, (2,), np.dtype(np.float64))
array([1., 1.])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.backend import copy_in_layout_of
from ..core.batched import BatchedTensor, values_of
from ..core.lazy import is_immutable, is_lazy_array
from ..core.tensor import FLOATING, Tensor, wrap
from ..errors import OpError
from ..kernels.linalg import column_major

__all__ = [
    "fit_tangent",
    "fit_array",
    "own_array",
    "own_fast",
    "own_tensor",
    "unshared",
    "laid_out",
    "lay_out",
    "in_layout_of",
    "to_dtype",
]

_ndarray = np.ndarray


# -- fit ------------------------------------------------------------------------------------------


def _check_shape(op: Any, shape: tuple, want: tuple, batch: int | None = None) -> None:
    """A formula's tangent of `shape` must broadcast to its output's `want` (else the op's bug)."""
    try:
        fits = np.broadcast_shapes(shape, want) == tuple(want)
    except ValueError:
        fits = False
    if not fits:
        name = getattr(op, "name", "an op")
        out = tuple(want) if batch is None else f"{tuple(want[1:])} (a batch of {batch} tangents: {tuple(want)})"
        raise OpError(
            f"{name}: forward formula produced a tangent of shape {tuple(shape)} for an output of shape {out}"
        )


def fit_tangent(op: Any, t, shape: tuple, dtype: np.dtype):
    """A Tensor formula's tangent brought to its output's `shape` and `dtype` with differentiable
    ops (for nested levels); None for an integer or bool output, whatever the formula says (a
    cast's formula casts the tangent too). A batched tangent (vector mode, vmap) is fitted by its
    logical shape."""
    if dtype.kind not in FLOATING:
        return None
    if not isinstance(t, Tensor):
        t = wrap(np.asarray(t))
    d = t._data if type(t) is Tensor else t
    if d.shape != shape:
        _check_shape(op, d.shape, shape)
        t = t.expand(shape).clone()
    return to_dtype(t, dtype) if d.dtype != dtype else t


def to_dtype(t: Tensor, dtype: np.dtype) -> Tensor:
    """t in dtype, differentiably: a complex value for a real slot gives its real part (an R-linear
    reading), then the cast. The one rule for tangents and gradients alike.

    >>> import numpy as np, pushforward as pf
    >>> to_dtype(pf.tensor([1 + 2j]), np.dtype(np.float32))
    tensor([1.], dtype=pushforward.float32)
    """
    if t.dtype.kind == "c" and dtype.kind != "c":
        t = t.real
    return t.to(dtype) if t.dtype != dtype else t


def fit_array(op: Any, r, shape: tuple, dtype: np.dtype, batch: int | None = None):
    """An array formula's tangent brought to its output's `shape` and `dtype` (with a leading batch
    dim of size `batch` at a vector-mode level), fresh where it had to change; None for no tangent
    and for an integer or bool output. A Dask array stays lazy (fitted as a Tensor)."""
    if r is None or dtype.kind not in FLOATING:
        return None
    want = shape if batch is None else (batch,) + shape
    if type(r) is not _ndarray:
        if batch is None and not isinstance(r, (np.ndarray, np.generic, *_PY_SCALARS)) and is_lazy_array(r):
            return fit_tangent(op, wrap(r), shape, dtype)._data
        r = np.asanyarray(r)  # (a NumPy scalar; an ndarray subclass stays: pf.compile's tracer)
    if r.shape == want and r.dtype == dtype:
        return r
    changed = r.shape != want
    if changed:
        _check_shape(op, r.shape, want, batch)
        r = np.broadcast_to(r, want)
    if r.dtype != dtype:
        if r.dtype.kind == "c" and dtype.kind != "c":
            r = r.real
        if r.dtype != dtype:
            return r.astype(dtype)  # (a fresh array)
    return r.copy() if changed else r  # (a broadcast is no array of its own)


_PY_SCALARS = (float, int, complex, bool)


# -- own memory -----------------------------------------------------------------------------------


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


def own_tensor(t: Tensor, arrays) -> Tensor:
    """t, or t.clone() (differentiable, for nested levels) when it may share memory with `arrays`."""
    d = t._data if type(t) is not BatchedTensor else values_of(t)
    if type(d) is not _ndarray and is_immutable(d):  # (a Dask array): sharing it is harmless
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


# -- laid out as the result -----------------------------------------------------------------------


def laid_out(formula: Callable, n: int) -> Callable:
    """An element-wise op's tangent formula whose tangent is laid out in memory as the op's result
    (torch gives a tangent of another layout the primal's strides). Its first `n` arguments are
    the primal inputs; its parameter `result` the op's result. (The result's own layout is the
    kernel's: K.elementwise_layout, K.pow.)"""
    code = formula.__code__
    at = code.co_varnames[: code.co_argcount].index("result")

    def tangent(*a):
        r = formula(*a)
        if type(r) is _ndarray and r.ndim < 2:  # one layout: the commonest case, at once
            return r
        res = a[at]
        if isinstance(r, np.ndarray):  # (pf.compile traces with an ndarray subclass)
            # (the result's strides already, the commonest: no call)
            return r if type(res) is _ndarray and r.strides == res.strides else _in_layout_of_result(r, res)
        if type(r) is not Tensor or any(type(x) is not Tensor and isinstance(x, Tensor) for x in a[:n]):
            return r  # no tangent, or a batch of them (vector mode)
        d = _in_layout_of_result(r._data, res._data if isinstance(res, Tensor) else res)
        return r if d is r._data else wrap(d).copy_(r)  # copy_: differentiable, as the formula is

    return tangent


def in_layout_of(like: np.ndarray, t: Tensor) -> Tensor:
    """A copy of t laid out in memory as the array `like` (copy_: differentiable, as a formula is).

    >>> import numpy as np, pushforward as pf
    >>> in_layout_of(np.empty((2, 2), order="F"), pf.ones(2, 2)).stride()
    (1, 2)
    """
    return wrap(np.empty_like(like)).copy_(t)


def _in_layout_of_result(r, res):
    """Array r, or a copy of it in the memory layout of the op's result `res` when r has res's shape
    and dtype but other strides (a smaller tangent is fitted later, `fit_array` / `fit_tangent`)."""
    if not isinstance(res, np.ndarray) or r.strides == res.strides or r.shape != res.shape or r.dtype != res.dtype:
        return r
    return copy_in_layout_of(r, res)


def lay_out(layout: str, jvp: Callable | None, jvp_np: Callable | None) -> tuple:
    """The Tensor and array forward formulas of an op whose result has the YAML's `layout:`
    (contiguous, or column-major per matrix as LAPACK's), wrapped so their tangents have it too,
    whichever path computes them. (Wrapped once, by the `Op` record: other ops pay nothing.)"""
    if layout == "contiguous":
        return _contiguous_tensor(jvp), _contiguous_array(jvp_np)
    if layout == "column_major":
        return _column_major_tensor(jvp), _column_major_array(jvp_np)
    raise ValueError(f"unknown result layout {layout!r} (derivatives.yaml's layout: contiguous | column_major)")


# (each wrapper tests its result inline: a call of its own would cost every tangent of the op)
def _contiguous_array(f: Callable | None) -> Callable | None:
    def formula(*a):
        r = f(*a)
        return np.ascontiguousarray(r) if isinstance(r, np.ndarray) and not r.flags.c_contiguous else r

    return None if f is None else formula


def _contiguous_tensor(f: Callable | None) -> Callable | None:
    def formula(*a):
        r = f(*a)
        if type(r) is BatchedTensor:  # a batch of tangents (vector mode): each one contiguous
            return r.contiguous()
        return (
            r.clone() if type(r) is Tensor and isinstance(r._data, np.ndarray) and not r._data.flags.c_contiguous else r
        )

    return None if f is None else formula


def _column_major_array(f: Callable | None) -> Callable | None:
    def formula(*a):
        r = f(*a)
        return column_major(r) if isinstance(r, np.ndarray) else r

    return None if f is None else formula


def _column_major_tensor(f: Callable | None) -> Callable | None:
    def formula(*a):
        r = f(*a)
        if type(r) is BatchedTensor or (type(r) is Tensor and isinstance(r._data, np.ndarray)):
            rt = r.mT  # (a batch of tangents: the batch dim stays outermost)
            return r if type(r) is Tensor and rt._data.flags.c_contiguous else rt.contiguous().mT
        return r

    return None if f is None else formula
