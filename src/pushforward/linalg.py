"""pushforward.linalg: norms (torch.linalg names).

>>> import pushforward as pf
>>> float(pf.linalg.norm(pf.tensor([3.0, 4.0])))
5.0
"""
from __future__ import annotations

from .errors import OpError


def norm(x, ord=None, dim=None, keepdim: bool = False, *, axis=None):
    """Vector norm (ord a number, default 2) or, for two dims, the Frobenius norm (ord None/'fro')."""
    from ._generated import ops
    if axis is not None:
        dim = axis
    if isinstance(ord, str) or (dim is not None and not isinstance(dim, int) and len(dim) == 2
                                and ord not in (None, "fro")):
        if ord != "fro":
            raise NotImplementedError(f"linalg.norm: matrix norm ord={ord!r} is not implemented (only 'fro')")
    if ord is None or ord == "fro":
        if ord == "fro" and (dim is None and x.ndim != 2):
            raise OpError(f"linalg.norm: ord='fro' needs a 2-D input or two dims (got shape {tuple(x.shape)})")
        return ops.norm(x, 2, dim, keepdim)
    return ops.norm(x, ord, dim, keepdim)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False):
    """The vector ord-norm over dim (all elements when None)."""
    from ._generated import ops
    return ops.norm(x, ord, dim, keepdim)
