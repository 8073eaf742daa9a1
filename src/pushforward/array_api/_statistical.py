"""Reductions, cumulative and utility functions of the standard: our ops with `axis`/`keepdims`,
where axis=() reduces nothing (torch's would reduce everything) and an empty max is an error.

>>> import pushforward.array_api as xp
>>> xp.max(xp.asarray([[1.0, 5.0], [3.0, 2.0]]), axis=0)
tensor([3., 5.])
>>> xp.cumulative_sum(xp.asarray([1, 2, 3]), include_initial=True)
tensor([0, 1, 3, 6])
"""

from __future__ import annotations

from typing import Any, Callable

import builtins

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpValueError
from ..methods import logic
from ..ops import generated as ops
from ._common import axes_of, check_array
from ._dtypes import _dtype

__all__ = [
    "max",
    "min",
    "mean",
    "prod",
    "std",
    "sum",
    "var",
    "cumulative_sum",
    "cumulative_prod",
    "all",
    "any",
    "diff",
]


def max(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """The largest values along axis (values only; NaN propagates); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.max(xp.asarray([1.0, 4.0, 2.0]))
    tensor(4.)
    """
    return _extreme("max", ops.amax, x, axis, keepdims)


def min(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """The smallest values along axis (values only; NaN propagates); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.min(xp.asarray([1.0, 4.0, 2.0]))
    tensor(1.)
    """
    return _extreme("min", ops.amin, x, axis, keepdims)


def _extreme(name: str, op: Callable, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    check_array(name, x)
    axes = axes_of(name, axis, x.ndim)
    if not axes:
        return ops.clone(x)
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise OpValueError(f"array_api.{name}(): a reduction over an empty axis of shape {x.shape} has no {name}")
    # a fresh result (the op's own is saved for its backward): code written against the standard
    # may write into it in place (SciPy's `xpx.at(m)[...].set(...)` does)
    return ops.clone(op(_saved_copy(x), axes, keepdims))


def _saved_copy(x: Tensor) -> Tensor:
    """The input an op that saves it for its backward (max, min, var, std) should see: a private copy
    when the tape records x, so that code written against the standard may write into x in place
    afterwards (SciPy's logsumexp takes the max of `a`, then `xpx.at(a, i_max).set(-inf)` writes
    into `a`, which would invalidate the gradient); x itself otherwise (nothing is saved). See
    docs/design.md, "The Array API face"."""
    return ops.clone(x) if x.requires_grad else x


def _sum_like(name: str, op: Callable, x: Tensor, axis: Any, dtype: Any, keepdims: bool) -> Tensor:
    check_array(name, x)
    axes = axes_of(name, axis, x.ndim)
    dt = None if dtype is None else _dtype(name, dtype)
    if dt is None and x.dtype.kind in "iub":
        dt = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
    if not axes:
        return ops.to(x, dt or x.dtype, copy=True)
    return op(x, axes, keepdims, dtype=dt)


def sum(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """The sum along axis (integers accumulate in int64/uint64); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.sum(xp.asarray([[1, 2], [3, 4]], dtype=xp.int8), axis=1)
    tensor([3, 7])
    """
    return _sum_like("sum", ops.sum, x, axis, dtype, keepdims)


def prod(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """The product along axis (integers accumulate in int64/uint64); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.prod(xp.asarray([2.0, 3.0]))
    tensor(6.)
    """
    return _sum_like("prod", _prod, x, axis, dtype, keepdims)


def _prod(x: Tensor, axes: tuple, keepdims: bool, dtype: Any = None) -> Tensor:
    if dtype is not None and dtype != x.dtype:
        x = ops.to(x, dtype, copy=False)
    for a in sorted(axes, reverse=True):
        x = ops.prod(x, a, keepdims, dtype=x.dtype)
    return x


def mean(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The mean along axis; differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.mean(xp.asarray([1.0, 2.0]))
    tensor(1.5)
    """
    check_array("mean", x)
    axes = axes_of("mean", axis, x.ndim)
    return ops.mean(x, axes, keepdims) if axes else ops.clone(x)


def var(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The variance along axis (divided by N - correction); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.var(xp.asarray([1.0, 3.0]))
    tensor(1.)
    """
    check_array("var", x)
    axes = axes_of("var", axis, x.ndim)
    return ops.var(_saved_copy(x), axes, correction=correction, keepdim=keepdims) if axes else ops.mul(x, 0)


def std(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The standard deviation along axis (divided by N - correction); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.std(xp.asarray([1.0, 3.0]))
    tensor(1.)
    """
    check_array("std", x)
    axes = axes_of("std", axis, x.ndim)
    if not axes:
        return ops.mul(x, 0)
    # a fresh result, as max's (std saves its own for its backward)
    return ops.clone(ops.std(_saved_copy(x), axes, correction=correction, keepdim=keepdims))


def _cumulative(name: str, op: Callable, x: Tensor, axis: Any, dtype: Any, include_initial: bool, first: int) -> Tensor:
    check_array(name, x)
    if axis is None:
        if x.ndim > 1:
            raise OpValueError(f"array_api.{name}(): axis is required for an array of {x.ndim} dims")
        axis = 0
    if x.ndim == 0:
        raise OpValueError(f"array_api.{name}(): a 0-d array has no axis to accumulate along")
    (axis,) = axes_of(name, axis, x.ndim)
    dt = None if dtype is None else _dtype(name, dtype)
    if dt is None and x.dtype.kind in "iub":
        dt = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
    if dt is not None and dt != x.dtype:
        x = ops.to(x, dt, copy=False)
    out = op(x, axis, dtype=x.dtype)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = ops.cat([ops.new_full(x, tuple(shape), first), out], axis)
    return out


def cumulative_sum(
    x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """The running sum along axis (a leading 0 with include_initial); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.cumulative_sum(xp.asarray([1.0, 2.0]))
    tensor([1., 3.])
    """
    return _cumulative("cumulative_sum", ops.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(
    x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """The running product along axis (a leading 1 with include_initial); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.cumulative_prod(xp.asarray([2.0, 3.0]))
    tensor([2., 6.])
    """
    return _cumulative("cumulative_prod", ops.cumprod, x, axis, dtype, include_initial, 1)


def all(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """Whether every element along axis is true (non-zero).

    >>> import pushforward.array_api as xp
    >>> xp.all(xp.asarray([1, 0]))
    tensor(False)
    """
    check_array("all", x)
    axes = axes_of("all", axis, x.ndim)
    return logic.all(x, axes, keepdims) if axes else ops.ne(x, 0)


def any(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """Whether any element along axis is true (non-zero).

    >>> import pushforward.array_api as xp
    >>> xp.any(xp.asarray([1, 0]))
    tensor(True)
    """
    check_array("any", x)
    axes = axes_of("any", axis, x.ndim)
    return logic.any(x, axes, keepdims) if axes else ops.ne(x, 0)


def diff(
    x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """The n-th forward difference along axis; differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.diff(xp.asarray([1.0, 4.0, 9.0]))
    tensor([3., 5.])
    """
    check_array("diff", x)
    return ops.diff(x, n, axis, prepend, append)
