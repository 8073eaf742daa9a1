"""The main namespace's linear algebra: matmul, matrix_transpose, tensordot, vecdot.

>>> import pushforward.array_api as xp
>>> xp.vecdot(xp.asarray([1.0, 2.0]), xp.asarray([3.0, 4.0]))
tensor(11.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from ._common import check_array

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product (NumPy's broadcasting rules); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.matmul(xp.ones((2, 3)), xp.ones(3))
    tensor([3., 3.])
    """
    check_array("matmul", x1), check_array("matmul", x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise OpValueError("array_api.matmul(): operands must have at least one dimension (got a 0-d array)")
    return ops.matmul(x1, x2)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """Each matrix of the stack x transposed (a view).

    >>> import pushforward.array_api as xp
    >>> xp.matrix_transpose(xp.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    check_array("matrix_transpose", x)
    if x.ndim < 2:
        raise OpValueError(f"array_api.matrix_transpose(): needs at least 2 dims, got shape {x.shape}")
    return ops.mT(x)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Any = 2) -> Tensor:
    """The tensor contraction over axes (a count, or two sequences of axes); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.tensordot(xp.ones((2, 3)), xp.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    check_array("tensordot", x1), check_array("tensordot", x2)
    if not isinstance(axes, int):
        axes = (list(axes[0]), list(axes[1]))
    return _in_dtype(ops.tensordot(x1, x2, axes), x1, x2)


def _in_dtype(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """out in the promoted dtype of x1 and x2 (an integer contraction accumulates in 64 bits)."""
    dt = np.promote_types(x1.dtype, x2.dtype)
    return out if out.dtype == dt else ops.to(out, dt, copy=False)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along axis, conjugating x1 (broadcasting the rest); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.vecdot(xp.asarray([1j]), xp.asarray([1j]))
    tensor(1.+0.j, dtype=pushforward.complex128)
    """
    check_array("vecdot", x1), check_array("vecdot", x2)
    n = max(x1.ndim, x2.ndim)
    if not -min(x1.ndim, x2.ndim) <= axis < min(x1.ndim, x2.ndim) and not (axis < 0 and -axis <= n):
        raise OpValueError(f"array_api.vecdot(): axis {axis} is out of range for shapes {x1.shape}, {x2.shape}")
    a = axis if axis < 0 else axis - n
    if x1.shape[a] != x2.shape[a]:
        raise OpValueError(f"array_api.vecdot(): axis {axis} has sizes {x1.shape[a]} and {x2.shape[a]}")
    return _in_dtype(ops.sum(ops.mul(ops.conj(x1), x2), a), x1, x2)
