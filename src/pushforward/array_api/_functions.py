"""The standard's reductions, searching, sorting, set, manipulation and linear-algebra functions:
NumPy's (pushforward.numpy), checked by `strict`. Local are only where the standard differs:
sort/argsort's `descending`, take's
required axis, lists where NumPy returns tuples, an error for max/min of nothing, and a private
copy of the input that max, min, var and std save for their backward.

>>> import pushforward.array_api as xp
>>> xp.max(xp.asarray([[1.0, 5.0], [3.0, 2.0]]), axis=0)
tensor([3., 5.])
>>> xp.unique_counts(xp.asarray([2.0, 1.0, 2.0])).counts
tensor([1, 2])
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any


from .. import numpy as pnp
from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from ._common import check_array, dtype_of, strict

ONE_ARRAY = "all any argmax argmin count_nonzero diff mean prod sum"
ONE_ARRAY += " nonzero searchsorted where"
ONE_ARRAY += " broadcast_to flip moveaxis permute_dims repeat roll tile unstack"
ONE_ARRAY += " matrix_transpose"
SAME = {n: strict(n, getattr(pnp, n)) for n in ONE_ARRAY.split()}
SAME |= {n: strict(n, getattr(pnp, n), arrays=2) for n in ("matmul", "tensordot")}
SAME |= {n: strict(n, getattr(pnp, n), arrays=0) for n in ("concat", "stack")}
globals().update(SAME)

__all__ = [*SAME, "max", "min", "var", "std", "sort", "argsort", "reshape", "squeeze", "take", "broadcast_arrays"]
__all__ += ["cumulative_sum", "cumulative_prod", "expand_dims", "take_along_axis", "vecdot"]
__all__ += ["unique_all", "unique_counts", "unique_inverse", "unique_values"]


def _saved_copy(x: Tensor) -> Tensor:
    """The input an op that saves it for its backward (max, min, var, std) should see: a private copy
    when the tape records x, so that code written against the standard may write into x in place
    afterwards (SciPy's logsumexp takes the max of `a`, then `xpx.at(a, i_max).set(-inf)` writes
    into `a`, which would invalidate the gradient); x itself otherwise (nothing is saved). See
    docs/design.md, "The Array API face"."""
    return ops.clone(x) if x.requires_grad else x


def _extreme(name: str, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    check_array(name, x)
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise OpValueError(f"array_api.{name}(): a reduction over an empty axis of shape {x.shape} has no {name}")
    # a fresh result (the op's own is saved for its backward): code written against the standard
    # may write into it in place (SciPy's `xpx.at(m)[...].set(...)` does)
    return ops.clone(getattr(pnp, name)(_saved_copy(x), axis=axis, keepdims=keepdims))


def max(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """The largest values along axis (NumPy's; an empty axis is an error); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.max(xp.asarray([1.0, 4.0, 2.0]))
    tensor(4.)
    """
    return _extreme("max", x, axis, keepdims)


def min(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:  # noqa: A001 - the standard's name
    """The smallest values along axis (NumPy's; an empty axis is an error); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.min(xp.asarray([1.0, 4.0, 2.0]))
    tensor(1.)
    """
    return _extreme("min", x, axis, keepdims)


def var(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The variance along axis (divided by N - correction; NumPy's); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.var(xp.asarray([1.0, 3.0]))
    tensor(1.)
    """
    x = _saved_copy(check_array("var", x))
    return pnp.var(x, axis=axis, correction=correction, keepdims=keepdims)


def std(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The standard deviation along axis (divided by N - correction; NumPy's); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.std(xp.asarray([1.0, 3.0]))
    tensor(1.)
    """
    x = _saved_copy(check_array("std", x))
    # a fresh result, as max's (std saves its own for its backward)
    return ops.clone(pnp.std(x, axis=axis, correction=correction, keepdims=keepdims))


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """x's values sorted along axis (stable; NumPy's has no `descending`: the sort op's); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.sort(xp.asarray([3.0, 1.0, 2.0]), descending=True)
    tensor([3., 2., 1.])
    """
    return ops.sort(check_array("sort", x), axis, descending, True)[0]


def argsort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The indices that sort x along axis (stable; ties keep their order descending too: the argsort op's).

    >>> import pushforward.array_api as xp
    >>> xp.argsort(xp.asarray([1.0, 2.0, 1.0]), descending=True)
    tensor([1, 0, 2])
    """
    return ops.argsort(check_array("argsort", x), axis, descending, True)


def reshape(x: Tensor, /, shape: tuple, *, copy: bool | None = None) -> Tensor:
    """x in a new shape (a view when possible; copy=True copies, copy=False refuses to: ValueError).

    >>> import pushforward.array_api as xp
    >>> xp.reshape(xp.arange(6), (2, -1)).shape
    (2, 3)
    """
    return pnp.reshape(check_array("reshape", x), tuple(shape), copy=copy)


def squeeze(x: Tensor, /, axis: Any) -> Tensor:
    """x without the given axes, which must have size 1 (NumPy's).

    >>> import pushforward.array_api as xp
    >>> xp.squeeze(xp.zeros((1, 3)), axis=0).shape
    (3,)
    """
    check_array("squeeze", x)
    return pnp.squeeze(x, axis=axis)


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """The elements of x at the indices along axis (NumPy's; the standard requires axis unless x is 1-d).

    >>> import pushforward.array_api as xp
    >>> xp.take(xp.asarray([5.0, 6.0, 7.0]), xp.asarray([2, 0]))
    tensor([7., 5.])
    """
    if axis is None and check_array("take", x).ndim != 1:
        raise OpValueError(f"array_api.take(): axis is required for an array of {x.ndim} dims")
    return pnp.take(x, indices, axis=axis)


def broadcast_arrays(*arrays: Tensor) -> list:
    """The arrays broadcast against each other (views; a list, where NumPy's is a tuple).

    >>> import pushforward.array_api as xp
    >>> [a.shape for a in xp.broadcast_arrays(xp.zeros((2, 1)), xp.zeros(3))]
    [(2, 3), (2, 3)]
    """
    return list(pnp.broadcast_arrays(*(check_array("broadcast_arrays", a) for a in arrays))) if arrays else []


# the standard's result types (array-api-strict's names)
UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """NumPy's unique_all (each NaN distinct; the values differentiable, gathered from x).

    >>> import pushforward.array_api as xp
    >>> xp.unique_all(xp.asarray([2, 1, 2])).inverse_indices
    tensor([1, 0, 1])
    """
    return UniqueAllResult(*pnp.unique_all(check_array("unique_all", x)))


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The unique values and how often each occurs (unique_all's).

    >>> import pushforward.array_api as xp
    >>> xp.unique_counts(xp.asarray([2, 1, 2])).counts
    tensor([1, 2])
    """
    r = unique_all(x)
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The unique values and the indices that rebuild x from them (unique_all's).

    >>> import pushforward.array_api as xp
    >>> xp.unique_inverse(xp.asarray([2, 1, 2])).values
    tensor([1, 2])
    """
    r = unique_all(x)
    return UniqueInverseResult(r.values, r.inverse_indices)


def unique_values(x: Tensor, /) -> Tensor:
    """The unique values of x, sorted (each NaN distinct); differentiable (unique_all's).

    >>> import pushforward.array_api as xp
    >>> xp.unique_values(xp.asarray([2.0, 1.0, 2.0]))
    tensor([1., 2.])
    """
    return unique_all(x).values


def _accumulate(name: str) -> Any:
    def accumulate(
        x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
    ) -> Tensor:
        dt = None if dtype is None else dtype_of(name, dtype)
        return getattr(pnp, name)(check_array(name, x), axis=axis, dtype=dt, include_initial=include_initial)

    return strict(name, accumulate)


cumulative_sum = _accumulate("cumulative_sum")
cumulative_prod = _accumulate("cumulative_prod")


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    """x with a new axis of size 1 at axis (a view; NumPy's).

    >>> import pushforward.array_api as xp
    >>> xp.expand_dims(xp.zeros(3), axis=-1).shape
    (3, 1)
    """
    check_array("expand_dims", x)
    return pnp.expand_dims(x, axis)


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """The elements of x at indices matched along axis (NumPy's); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.take_along_axis(xp.asarray([[1.0, 2.0]]), xp.asarray([[1, 0]]), axis=1)
    tensor([[2., 1.]])
    """
    return pnp.take_along_axis(check_array("take_along_axis", x), indices, axis=axis)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along axis, conjugating x1 (broadcasting the rest); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.vecdot(xp.asarray([1j]), xp.asarray([1j]))
    tensor(1.+0.j, dtype=pushforward.complex128)
    """
    check_array("vecdot", x1), check_array("vecdot", x2)
    # the standard's axis counts along the broadcast shape: a positive one is valid where it names the
    # same axis of both (NumPy's counts along each operand's own shape)
    n = builtins.max(x1.ndim, x2.ndim)
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < builtins.min(x1.ndim, x2.ndim) and not (axis < 0 and -axis <= n):
        raise OpValueError(f"array_api.vecdot(): axis {axis} is out of range for shapes {x1.shape}, {x2.shape}")
    return pnp.vecdot(x1, x2, axis=axis if axis < 0 else axis - n)
