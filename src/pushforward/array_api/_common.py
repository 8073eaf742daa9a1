"""Helpers shared by the Array API face: coercing arguments, reading axes, wrapping results
that no derivative flows through (integer indices, counts, boolean masks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.creation import as_tensor
from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError

__all__ = ["tensor_of", "values_of", "constant", "axes_of", "check_array", "SCALARS"]

SCALARS = (bool, int, float, complex)


def check_array(name: str, x: Any) -> Tensor:
    """x itself if it is a Tensor, else a clear error naming the function."""
    if not isinstance(x, Tensor):
        raise OpTypeError(f"array_api.{name}(): expected an array (a pushforward Tensor), got {type(x).__name__}")
    return x


def tensor_of(x: Any) -> Tensor:
    """x as a Tensor (x itself if it is one)."""
    return x if isinstance(x, Tensor) else as_tensor(np.asarray(x))


def values_of(x: Any) -> np.ndarray:
    """The values of x as an ndarray (no derivative flows through what is computed from them)."""
    if isinstance(x, Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def constant(a: Any) -> Tensor:
    """A Tensor holding an ndarray computed from values (indices, counts, masks: no derivative)."""
    return as_tensor(np.array(a, copy=True, order="C"))


def axes_of(name: str, axis: Any, ndim: int) -> tuple:
    """axis (None, an int or a tuple) as a tuple of non-negative axes, checked against ndim."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise OpValueError(f"array_api.{name}(): axis {a} is out of range for an array of {ndim} dims")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise OpValueError(f"array_api.{name}(): repeated axis in {axis}")
    return tuple(out)
