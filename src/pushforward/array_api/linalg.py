"""The standard's linalg extension, over our differentiable linalg ops (pushforward.linalg).

>>> import pushforward.array_api as xp
>>> xp.linalg.svdvals(xp.asarray([[3.0, 0.0], [0.0, 4.0]]))
tensor([4., 3.])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from .. import linalg as _la
from ..core.namespace import public_dir as _public_dir
from ._common import axes_of, check_array
from ._dtypes import _dtype
from ._linear import matmul, matrix_transpose, tensordot, vecdot

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
    "EighResult",
    "QRResult",
    "SlogdetResult",
    "SVDResult",
]


class EighResult(NamedTuple):
    """eigh's result."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """qr's result."""

    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    """slogdet's result."""

    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    """svd's result."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def _square(name: str, x: Tensor) -> Tensor:
    check_array(name, x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise OpValueError(f"array_api.linalg.{name}(): needs a stack of square matrices, got shape {x.shape}")
    return x


def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor (lower, or upper: its conjugate transpose).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.cholesky(xp.asarray([[4.0, 0.0], [0.0, 9.0]]), upper=True)
    tensor([[2., 0.],
            [0., 3.]])
    """
    L = _la.cholesky(_square("cholesky", x))
    return ops.mT(L).conj() if upper else L


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along axis.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.cross(xp.asarray([1.0, 0.0, 0.0]), xp.asarray([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    check_array("cross", x1), check_array("cross", x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise OpValueError(f"array_api.linalg.cross(): axis {axis} must have size 3 in {x1.shape} and {x2.shape}")
    return _la.cross(x1, x2, dim=axis)


def det(x: Tensor, /) -> Tensor:
    """The determinant of each matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.det(xp.asarray([[2.0, 0.0], [0.0, 3.0]]))
    tensor(6.)
    """
    return _la.det(_square("det", x))


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The offset-th diagonal of each matrix (a view).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.diagonal(xp.asarray([[1.0, 2.0], [3.0, 4.0]]), offset=1)
    tensor([2.])
    """
    return _la.diagonal(check_array("diagonal", x), offset=offset)


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.eigh(xp.asarray([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    return EighResult(*_la.eigh(_square("eigh", x)))


def eigvalsh(x: Tensor, /) -> Tensor:
    """Eigenvalues (ascending) of each Hermitian matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.eigvalsh(xp.asarray([[2.0, 0.0], [0.0, 1.0]]))
    tensor([1., 2.])
    """
    return _la.eigvalsh(_square("eigvalsh", x))


def inv(x: Tensor, /) -> Tensor:
    """The inverse of each matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.inv(xp.asarray([[2.0]]))
    tensor([[0.5]])
    """
    return _la.inv(_square("inv", x))


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:
    """The matrix norm of each matrix ('fro', 'nuc', ±1, ±2, ±inf).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.matrix_norm(xp.asarray([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    return _la.matrix_norm(check_array("matrix_norm", x), ord, (-2, -1), keepdims)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """Each matrix to the integer power n.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.matrix_power(xp.asarray([[2.0]]), 3)
    tensor([[8.]])
    """
    return _la.matrix_power(_square("matrix_power", x), n)


def matrix_rank(x: Tensor, /, *, rtol: Any = None) -> Tensor:
    """The rank of each matrix (singular values above rtol times the largest).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.matrix_rank(xp.asarray([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    check_array("matrix_rank", x)
    if x.ndim < 2:
        raise OpValueError(f"array_api.linalg.matrix_rank(): needs matrices, got shape {x.shape}")
    s = _la.svdvals(x).detach()
    if rtol is None:
        rtol = max(x.shape[-2:]) * np.finfo(s.dtype).eps
    if isinstance(rtol, Tensor):
        rtol = ops.unsqueeze(rtol, -1)
    tol = ops.mul(ops.amax(s, -1, True), rtol) if s.shape[-1] else s
    return ops.sum(ops.gt(s, tol), -1)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The outer product of two vectors.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.outer(xp.asarray([1.0, 2.0]), xp.asarray([3.0]))
    tensor([[3.],
            [6.]])
    """
    check_array("outer", x1), check_array("outer", x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise OpValueError(f"array_api.linalg.outer(): needs two vectors, got shapes {x1.shape}, {x2.shape}")
    return ops.outer(x1, x2)


def pinv(x: Tensor, /, *, rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix (singular values at most rtol times the
    largest count as zero; rtol may be an array broadcasting against the stack).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.pinv(xp.asarray([[2.0, 0.0]]))
    tensor([[0.5],
            [0. ]])
    """
    check_array("pinv", x)
    if x.ndim < 2:
        raise OpValueError(f"array_api.linalg.pinv(): needs matrices, got shape {x.shape}")
    if rtol is None:
        rtol = max(x.shape[-2:]) * np.finfo(x.dtype).eps
    if 0 in x.shape:
        return ops.mT(ops.mul(x, 0))
    if not isinstance(rtol, Tensor):
        return _la.pinv(x, rtol=float(rtol))
    # a stack of tolerances: the pseudo-inverse from the SVD, each matrix with its own cut-off
    U, S, Vh = _la.svd(x, False)
    cut = ops.mul(ops.amax(S, -1, True), ops.unsqueeze(rtol, -1)).detach()
    keep = ops.gt(S, cut)
    inv_s = ops.where(keep, ops.reciprocal(ops.where(keep, S, 1)), 0)
    return ops.matmul(ops.mT(Vh).conj(), ops.mul(ops.unsqueeze(inv_s, -1), ops.mT(U).conj()))


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorisation of each matrix (mode 'reduced' or 'complete').

    >>> import pushforward.array_api as xp
    >>> xp.linalg.qr(xp.asarray([[2.0, 0.0], [0.0, 3.0]])).R.shape
    (2, 2)
    """
    if mode not in ("reduced", "complete"):
        raise OpValueError(f"array_api.linalg.qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*_la.qr(check_array("qr", x), mode))


def slogdet(x: Tensor, /) -> SlogdetResult:
    """The sign and log of the absolute value of each determinant.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.slogdet(xp.asarray([[-1.0]])).sign
    tensor(-1.)
    """
    return SlogdetResult(*_la.slogdet(_square("slogdet", x)))


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The solution X of x1 X = x2 (x2 a vector only when 1-d).

    >>> import pushforward.array_api as xp
    >>> xp.linalg.solve(xp.asarray([[2.0]]), xp.asarray([4.0]))
    tensor([2.])
    """
    _square("solve", x1)
    return _la.solve(x1, x2)


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition U, S, Vh of each matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.svd(xp.asarray([[3.0, 0.0], [0.0, 4.0]])).S
    tensor([4., 3.])
    """
    return SVDResult(*_la.svd(check_array("svd", x), full_matrices))


def svdvals(x: Tensor, /) -> Tensor:
    """The singular values of each matrix, descending.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.svdvals(xp.asarray([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    return _la.svdvals(check_array("svdvals", x))


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """The sum of the offset-th diagonal of each matrix.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.trace(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    check_array("trace", x)
    dt = None if dtype is None else _dtype("trace", dtype)
    if dt is None and x.dtype.kind in "iub":
        dt = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
    return ops.sum(_la.diagonal(x, offset=offset), -1, dtype=dt)


def vector_norm(x: Tensor, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Tensor:
    """The vector norm over axis (all of x when None), of order ord.

    >>> import pushforward.array_api as xp
    >>> xp.linalg.vector_norm(xp.asarray([3.0, 4.0]))
    tensor(5.)
    """
    check_array("vector_norm", x)
    axes = axes_of("vector_norm", axis, x.ndim)
    if axis is None and keepdims is False:
        return _la.vector_norm(ops.reshape(x, (-1,)), ord, 0)
    return _la.vector_norm(x, ord, axes, keepdims)


__dir__ = _public_dir(globals())
