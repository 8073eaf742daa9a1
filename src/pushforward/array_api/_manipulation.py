"""Manipulation and indexing functions of the standard, as our differentiable view and copy ops.

>>> import pushforward.array_api as xp
>>> xp.permute_dims(xp.zeros((2, 3)), (1, 0)).shape
(3, 2)
>>> xp.take(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), xp.asarray([1]), axis=1)
tensor([[2.],
        [4.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpIndexError, OpValueError
from ..ops import generated as ops
from ._common import axes_of, check_array, tensor_of

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
    "take",
    "take_along_axis",
]


def broadcast_arrays(*arrays: Tensor) -> list:
    """The arrays broadcast against each other (views).

    >>> import pushforward.array_api as xp
    >>> [a.shape for a in xp.broadcast_arrays(xp.zeros((2, 1)), xp.zeros(3))]
    [(2, 3), (2, 3)]
    """
    return list(ops.broadcast_tensors(*arrays)) if arrays else []


def broadcast_to(x: Tensor, /, shape: tuple) -> Tensor:
    """x broadcast to shape (a view).

    >>> import pushforward.array_api as xp
    >>> xp.broadcast_to(xp.zeros(3), (2, 3)).shape
    (2, 3)
    """
    return check_array("broadcast_to", x).broadcast_to(tuple(shape))


def concat(arrays: Any, /, *, axis: int | None = 0) -> Tensor:
    """The arrays joined along axis (flattened first when axis is None).

    >>> import pushforward.array_api as xp
    >>> xp.concat([xp.zeros(1), xp.ones(2)], axis=None)
    tensor([0., 1., 1.])
    """
    arrays = list(arrays)
    if axis is None:
        return ops.cat([ops.reshape(a, (-1,)) for a in arrays], 0)
    return ops.cat(arrays, axis)


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    """x with a new axis of size 1 at axis (a view).

    >>> import pushforward.array_api as xp
    >>> xp.expand_dims(xp.zeros(3), axis=-1).shape
    (3, 1)
    """
    check_array("expand_dims", x)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise OpIndexError(f"array_api.expand_dims(): axis {axis} is out of range for {x.ndim} + 1 dims")
    return ops.unsqueeze(x, axis)


def flip(x: Tensor, /, *, axis: Any = None) -> Tensor:
    """x with the order of elements reversed along axis (all when None).

    >>> import pushforward.array_api as xp
    >>> xp.flip(xp.asarray([1, 2, 3]))
    tensor([3, 2, 1])
    """
    check_array("flip", x)
    return ops.flip(x, axes_of("flip", axis, x.ndim))


def moveaxis(x: Tensor, source: Any, destination: Any, /) -> Tensor:
    """x with axes moved (a view).

    >>> import pushforward.array_api as xp
    >>> xp.moveaxis(xp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    return ops.moveaxis(check_array("moveaxis", x), source, destination)


def permute_dims(x: Tensor, /, axes: tuple) -> Tensor:
    """x with its axes permuted (a view).

    >>> import pushforward.array_api as xp
    >>> xp.permute_dims(xp.zeros((1, 2, 3)), (2, 0, 1)).shape
    (3, 1, 2)
    """
    check_array("permute_dims", x)
    if sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
        raise OpValueError(f"array_api.permute_dims(): {tuple(axes)} is not a permutation of {x.ndim} axes")
    return ops.permute(x, tuple(axes))


def repeat(x: Tensor, repeats: Any, /, *, axis: int | None = None) -> Tensor:
    """Each element repeated (x flattened first when axis is None).

    >>> import pushforward.array_api as xp
    >>> xp.repeat(xp.asarray([1, 2]), 2)
    tensor([1, 1, 2, 2])
    """
    check_array("repeat", x)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    return ops.repeat_interleave(x, repeats, axis)


def _is_copy(out: Tensor, x: Tensor) -> bool:
    """Does out hold its own memory rather than a view of x's? (A Dask array has no memory to
    share: its reshape is always lazy, never a copy.)"""
    a, b = out._data, x._data
    return type(a) is np.ndarray and type(b) is np.ndarray and not np.shares_memory(a, b)


def reshape(x: Tensor, /, shape: tuple, *, copy: bool | None = None) -> Tensor:
    """x in a new shape (a view when possible; copy=True copies, copy=False refuses to).

    >>> import pushforward.array_api as xp
    >>> xp.reshape(xp.arange(6), (2, -1)).shape
    (2, 3)
    """
    check_array("reshape", x)
    shape = tuple(shape)
    if copy:
        return ops.clone(ops.reshape(x, shape))
    out = ops.reshape(x, shape)
    if copy is False and x.numel() and _is_copy(out, x):
        # the standard: "if copy is False, a copy must not be made; raise ValueError if one is needed"
        raise OpValueError(
            f"array_api.reshape(): copy=False, but shape {tuple(x.shape)} -> {shape} needs a copy for this "
            "array's memory layout (pass copy=None to allow one)"
        )
    return out


def roll(x: Tensor, /, shift: Any, *, axis: Any = None) -> Tensor:
    """x's elements shifted cyclically along axis (flattened when None).

    >>> import pushforward.array_api as xp
    >>> xp.roll(xp.asarray([1, 2, 3]), 1)
    tensor([3, 1, 2])
    """
    check_array("roll", x)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(x, (-1,)), shift, 0), x.shape)
    return ops.roll(x, shift, axis)


def squeeze(x: Tensor, /, axis: Any) -> Tensor:
    """x without the given axes, which must have size 1.

    >>> import pushforward.array_api as xp
    >>> xp.squeeze(xp.zeros((1, 3)), axis=0).shape
    (3,)
    """
    check_array("squeeze", x)
    axes = axes_of("squeeze", axis, x.ndim)
    bad = [a for a in axes if x.shape[a] != 1]
    if bad:
        raise OpValueError(f"array_api.squeeze(): axis {bad[0]} has size {x.shape[bad[0]]}, not 1 (shape {x.shape})")
    return ops.squeeze(x, axes) if axes else x


def stack(arrays: Any, /, *, axis: int = 0) -> Tensor:
    """The arrays joined along a new axis.

    >>> import pushforward.array_api as xp
    >>> xp.stack([xp.zeros(2), xp.ones(2)], axis=1).shape
    (2, 2)
    """
    return ops.stack(list(arrays), axis)


def tile(x: Tensor, repetitions: tuple, /) -> Tensor:
    """x repeated along each axis.

    >>> import pushforward.array_api as xp
    >>> xp.tile(xp.asarray([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    return ops.tile(check_array("tile", x), tuple(repetitions))


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple:
    """The slices of x along axis (views).

    >>> import pushforward.array_api as xp
    >>> len(xp.unstack(xp.zeros((3, 2))))
    3
    """
    check_array("unstack", x)
    axes_of("unstack", axis, x.ndim)
    return tuple(ops.unbind(x, axis))


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """The elements of x at the integer indices along axis (a 1-d x may omit axis); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.take(xp.asarray([5.0, 6.0, 7.0]), xp.asarray([2, 0]))
    tensor([7., 5.])
    """
    check_array("take", x)
    if axis is None:
        if x.ndim != 1:
            raise OpValueError(f"array_api.take(): axis is required for an array of {x.ndim} dims")
        axis = 0
    return ops.index_select(x, axis, _wrapped(tensor_of(indices), x.shape[axis]))


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """The elements of x at indices matched along axis (as NumPy's); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.take_along_axis(xp.asarray([[1.0, 2.0]]), xp.asarray([[1, 0]]), axis=1)
    tensor([[2., 1.]])
    """
    check_array("take_along_axis", x)
    (a,) = axes_of("take_along_axis", axis, x.ndim)
    return ops.take_along_dim(x, _wrapped(indices, x.shape[a]), axis)


def _wrapped(indices: Tensor, n: int) -> Tensor:
    """Negative indices counted from the end (as the standard allows)."""
    return ops.where(ops.lt(indices, 0), ops.add(indices, n), indices)
