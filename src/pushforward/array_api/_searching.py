"""Searching, sorting and set functions of the standard. Values (sort, unique_* values, max...)
are gathered from the input by our differentiable ops; indices, counts and masks carry no
derivative and are computed from the values.

>>> import pushforward.array_api as xp
>>> xp.unique_counts(xp.asarray([2.0, 1.0, 2.0]))
UniqueCountsResult(values=tensor([1., 2.]), counts=tensor([1, 2]))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from ._common import axes_of, check_array, constant, values_of

__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "sort",
    "where",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
]


class UniqueAllResult(NamedTuple):
    """unique_all's result."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """unique_counts's result."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """unique_inverse's result."""

    values: Tensor
    inverse_indices: Tensor


def _arg(name: str, op: Any, x: Tensor, axis: int | None, keepdims: bool) -> Tensor:
    check_array(name, x)
    if x.numel() == 0:
        raise OpValueError(f"array_api.{name}(): an empty array (shape {x.shape}) has no {name[3:]}")
    if axis is None:
        out = op(ops.reshape(x, (-1,)), 0)
        return ops.reshape(out, (1,) * x.ndim) if keepdims else out
    axes_of(name, axis, x.ndim)
    return op(x, axis, keepdims)


def argmax(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Indices of the first maximum (along axis, or of the flattened x).

    >>> import pushforward.array_api as xp
    >>> xp.argmax(xp.asarray([1.0, 3.0, 3.0]))
    tensor(1)
    """
    return _arg("argmax", ops.argmax, x, axis, keepdims)


def argmin(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Indices of the first minimum (along axis, or of the flattened x).

    >>> import pushforward.array_api as xp
    >>> xp.argmin(xp.asarray([3.0, 1.0, 1.0]))
    tensor(1)
    """
    return _arg("argmin", ops.argmin, x, axis, keepdims)


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """x's values sorted along axis (stable by default); differentiable (a gather).

    >>> import pushforward.array_api as xp
    >>> xp.sort(xp.asarray([3.0, 1.0, 2.0]), descending=True)
    tensor([3., 2., 1.])
    """
    check_array("sort", x)
    axes_of("sort", axis, x.ndim)
    return ops.sort(x, axis, descending, True)[0]


def argsort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The indices that sort x along axis (stable by default; ties keep their order descending too).

    >>> import pushforward.array_api as xp
    >>> xp.argsort(xp.asarray([1.0, 2.0, 1.0]), descending=True)
    tensor([1, 0, 2])
    """
    check_array("argsort", x)
    axes_of("argsort", axis, x.ndim)
    return ops.argsort(x, axis, descending, True)


def count_nonzero(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The number of non-zero elements (along axis).

    >>> import pushforward.array_api as xp
    >>> xp.count_nonzero(xp.asarray([0.0, 1.0, 2.0]))
    tensor(2)
    """
    check_array("count_nonzero", x)
    axes = axes_of("count_nonzero", axis, x.ndim)
    out = ops.count_nonzero(x, axes if x.ndim else None)
    if keepdims:
        out = out.reshape(*[1 if d in axes else n for d, n in enumerate(x.shape)])
    return out


def nonzero(x: Tensor, /) -> tuple:
    """The indices of the non-zero elements, one index array per axis (x must have a dim).

    >>> import pushforward.array_api as xp
    >>> xp.nonzero(xp.asarray([0, 3, 4]))
    (tensor([1, 2]),)
    """
    check_array("nonzero", x)
    if x.ndim == 0:
        raise OpValueError("array_api.nonzero(): a 0-d array has no axes to index; reshape it to 1-d first")
    return tuple(constant(i.astype(np.int64)) for i in np.nonzero(values_of(x)))


def searchsorted(x1: Tensor, x2: Any, /, *, side: str = "left", sorter: Tensor | None = None) -> Tensor:
    """Where x2's values go in the sorted 1-d x1 (sorted by sorter's indices if given).

    >>> import pushforward.array_api as xp
    >>> xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([2.0, 2.5]))
    tensor([1, 2])
    """
    check_array("searchsorted", x1)
    if x1.ndim != 1:
        raise OpValueError(f"array_api.searchsorted(): x1 must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise OpValueError(f"array_api.searchsorted(): side must be 'left' or 'right', got {side!r}")
    return ops.searchsorted(x1, x2, side=side, sorter=sorter)


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    """x1 where condition holds, else x2 (arrays or scalars); differentiable in x1 and x2.

    >>> import pushforward.array_api as xp
    >>> xp.where(xp.asarray([True, False]), xp.asarray([1.0, 2.0]), 0.0)
    tensor([1., 0.])
    """
    check_array("where", condition)
    return ops.where(condition, x1, x2)


def _unique(name: str, x: Tensor) -> tuple:
    """(values, first indices, inverse indices, counts); every NaN is its own value."""
    check_array(name, x)
    flat = values_of(x).reshape(-1)
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    new = np.ones(s.shape, bool)
    if s.size:
        new[1:] = (s[1:] != s[:-1]) | (s[1:] != s[1:])
    group = np.cumsum(new) - 1
    first = order[new]
    inverse = np.empty(flat.shape, np.int64)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(new), s.size))
    values = ops.index_select(ops.reshape(x, (-1,)), 0, constant(first.astype(np.int64)))
    return values, constant(first.astype(np.int64)), constant(inverse.reshape(x.shape)), constant(counts)


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """The unique values, the index of each's first occurrence, the inverse indices, the counts.

    >>> import pushforward.array_api as xp
    >>> xp.unique_all(xp.asarray([2, 1, 2])).inverse_indices
    tensor([1, 0, 1])
    """
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The unique values and how often each occurs.

    >>> import pushforward.array_api as xp
    >>> xp.unique_counts(xp.asarray([2, 1, 2])).counts
    tensor([1, 2])
    """
    v, _, _, c = _unique("unique_counts", x)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The unique values and the indices that rebuild x from them.

    >>> import pushforward.array_api as xp
    >>> xp.unique_inverse(xp.asarray([2, 1, 2])).values
    tensor([1, 2])
    """
    v, _, inv, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(v, inv)


def unique_values(x: Tensor, /) -> Tensor:
    """The unique values of x, sorted (each NaN is distinct); differentiable (a gather).

    >>> import pushforward.array_api as xp
    >>> xp.unique_values(xp.asarray([2.0, 1.0, 2.0]))
    tensor([1., 2.])
    """
    return _unique("unique_values", x)[0]
