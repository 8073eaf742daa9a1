"""pushforward.scipy.linalg: what scipy.linalg adds over pushforward.linalg, on tensors:
solve_triangular, cho_factor/cho_solve, sqrtm, expm, solve_sylvester, solve_banded (composites of
our ops, differentiable in every tensor argument).

>>> import pushforward as pf
>>> sqrtm(pf.tensor([[4.0, 0.0], [0.0, 9.0]]))
tensor([[2., 0.],
        [0., 3.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from .. import linalg
from ._common import as_float

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "sqrtm", "expm", "solve_sylvester", "solve_banded"]


def _solve_tri(a: Tensor, b: Tensor, lower: bool, trans: Any, unit_diagonal: bool) -> Tensor:
    if trans in (1, "T"):
        a, lower = a.mT, not lower
    elif trans in (2, "C"):
        a, lower = a.mH, not lower
    vec = b.ndim == a.ndim - 1
    x = linalg.solve_triangular(a, b.unsqueeze(-1) if vec else b, upper=not lower, unitriangular=unit_diagonal)
    return x.squeeze(-1) if vec else x


def solve_triangular(
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Tensor:
    """x with a x = b (a triangular; trans 'T'/'C' solve with its transpose / conjugate transpose)."""
    return _solve_tri(as_float(a), as_float(b), lower, trans, unit_diagonal)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(c, lower): the Cholesky factor (upper unless lower=True), for cho_solve."""
    low = linalg.cholesky(as_float(a))
    return (low if lower else low.mH), lower


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False, check_finite: bool = True) -> Tensor:
    """x with a x = b, from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b = as_float(c), as_float(b)
    low = c if lower else c.mH
    y = _solve_tri(low, b, True, 0, False)
    return _solve_tri(low.mH, y, False, 0, False)


def sqrtm(A: Any, disp: bool = True, blocksize: int = 64) -> Tensor:
    """The principal matrix square root: by eigh for a Hermitian A, by eig otherwise (complex when
    A has negative eigenvalues, as SciPy)."""
    a = as_float(A)
    v = a.detach().numpy()
    if np.allclose(v, np.conj(np.swapaxes(v, -1, -2))):
        w, u = linalg.eigh(a)
        if bool(np.all(w.detach().numpy() >= 0)):
            return ops.matmul(u * ops.sqrt(w).unsqueeze(-2), u.mH)
        r = ops.matmul(u * ops.sqrt(w.to(np.dtype(np.complex128))).unsqueeze(-2), u.mH.to(np.dtype(np.complex128)))
        return r
    w, u = linalg.eig(a)
    r = ops.matmul(u * ops.sqrt(w).unsqueeze(-2), linalg.inv(u))
    if not a.is_complex() and bool(np.allclose(r.detach().numpy().imag, 0)):
        return r.real
    return r


def expm(A: Any) -> Tensor:
    """The matrix exponential."""
    return linalg.matrix_exp(as_float(A))


def solve_sylvester(a: Any, b: Any, q: Any) -> Tensor:
    """x with a x + x b = q, by the Kronecker form (kron(a, I) + kron(I, b^T)) vec(x) = vec(q)."""
    a, b, q = as_float(a), as_float(b), as_float(q)
    n, m = q.shape[-2], q.shape[-1]
    k = ops.kron(a, creation.eye(m, dtype=a.dtype)) + ops.kron(creation.eye(n, dtype=b.dtype), b.mT)
    return linalg.solve(k, q.reshape(n * m)).reshape(n, m)


def solve_banded(
    l_and_u: tuple, ab: Any, b: Any, overwrite_ab: bool = False, overwrite_b: bool = False, check_finite: bool = True
) -> Tensor:
    """x with a x = b, a given in banded storage: a[i, j] = ab[u + i - j, j]."""
    lo, up = (int(v) for v in l_and_u)
    ab, b = as_float(ab), as_float(b)
    if ab.shape[0] != lo + up + 1:
        raise OpValueError(f"solve_banded: ab has {ab.shape[0]} rows, (l, u) = ({lo}, {up}) needs {lo + up + 1}")
    n = ab.shape[1]
    a = None
    for r in range(lo + up + 1):
        k = up - r  # the diagonal row r of ab holds
        band = ab[r, k:] if k >= 0 else ab[r, : n + k]
        term = ops.diag(band, k)
        a = term if a is None else a + term
    return linalg.solve(a, b)
