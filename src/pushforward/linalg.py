"""pushforward.linalg: torch.linalg's functions, differentiable in both modes.

Every function is batched over leading dims and has backward and forward (tangent)
formulas written over pushforward's own ops, so Hessian-vector products and higher
derivatives work by nesting. Decisions on the hard cases are in docs/linalg.md.

>>> import pushforward as pf
>>> float(pf.linalg.norm(pf.tensor([3.0, 4.0])))
5.0
>>> A = pf.tensor([[4.0, 1.0], [1.0, 3.0]])
>>> L = pf.linalg.cholesky(A)
>>> bool(((L @ L.mT - A).abs() < 1e-12).all())
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING, Any

if _TYPE_CHECKING:
    from .core.tensor import Tensor

from .ops import generated as ops
from .errors import OpError
from .core.namespace import public_dir as _public_dir


# torch.linalg's names of the ops: their `linalg.<name>` aliases in derivatives.yaml
globals().update(ops.NAMESPACES["linalg"])
__all__ = sorted(ops.NAMESPACES["linalg"]) + ["norm", "vector_norm", "diagonal"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix (a view). Example: pf.linalg.diagonal(pf.eye(2))"""
    return A.diagonal(offset, dim1, dim2)


def norm(x: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Tensor:
    """torch.linalg.norm: a vector norm (1-D, or dim an int) or a matrix norm (2-D, or dim two
    ints; ord 'fro', 'nuc', 1, -1, 2, -2, inf, -inf). ord None: the 2-norm of the flattened
    input when dim is None, else of the vectors / the Frobenius norm of the matrices."""
    if axis is not None:
        dim = axis
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return ops.norm(x, 2, dim, keepdim)
    if dim is None:
        if x.ndim == 1:
            dim = (0,)
        elif x.ndim == 2:
            dim = (0, 1)
        else:
            raise OpError(
                f"linalg.norm: with ord={ord!r}, the input must be 1-D or 2-D unless dim is given "
                f"(got shape {tuple(x.shape)})"
            )
    if len(dim) == 2:
        return ops.linalg_matrix_norm(x, ord, tuple(dim), keepdim)
    if isinstance(ord, str):
        raise OpError(f"linalg.norm: ord={ord!r} is a matrix norm, but dim {tuple(dim)} names one dimension")
    return ops.norm(x, ord, dim, keepdim)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The vector ord-norm over dim (all elements when None)."""
    return ops.norm(x, ord, dim, keepdim)


__dir__ = _public_dir(globals())
