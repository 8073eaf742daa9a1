"""The standard's linalg extension: NumPy 2's linalg (pushforward.numpy.linalg, over our
differentiable linalg ops), checked by `strict`; local are matrix_rank's and pinv's checks (matrices only, the
standard's default rtol, pinv of an empty stack).

>>> import pushforward.array_api as xp
>>> xp.linalg.svdvals(xp.asarray([[3.0, 0.0], [0.0, 4.0]]))
tensor([4., 3.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    return pnp.linalg.matrix_rank(x, rtol=rtol)


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
    return pnp.linalg.pinv(x, rtol=rtol)


__dir__ = _public_dir(globals())
