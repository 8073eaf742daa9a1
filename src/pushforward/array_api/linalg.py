"""The standard's linalg extension: NumPy 2's linalg (pushforward.numpy.linalg, over our
differentiable linalg ops), checked by `strict`; local are matrix_rank and pinv with an array of
tolerances (NumPy broadcasts rtol against the stack; pushforward.linalg's ops take one number).

>>> import pushforward.array_api as xp
>>> xp.linalg.svdvals(xp.asarray([[3.0, 0.0], [0.0, 4.0]]))
tensor([4., 3.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import linalg as _la
from .. import numpy as pnp
from ..core.namespace import public_dir as _public_dir
from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from ._common import check_array, strict
from ._functions import vecdot

ONE_ARRAY = "cholesky det diagonal eigh eigvalsh inv matrix_norm matrix_power matrix_transpose qr slogdet svd"
ONE_ARRAY += " svdvals trace vector_norm"
SAME = {n: strict(n, getattr(pnp.linalg, n), module=__name__) for n in ONE_ARRAY.split()}
SAME |= {
    n: strict(n, getattr(pnp.linalg, n), arrays=2, module=__name__)
    for n in ("cross", "matmul", "outer", "solve", "tensordot")
}
globals().update(SAME)

__all__ = [*SAME, "matrix_rank", "pinv", "vecdot"]


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


__dir__ = _public_dir(globals())
