"""Whole Jacobians: `jacfwd`/`jacrev` of a dense map, and a sparse Jacobian from detected sparsity.

- Dense: f(x) = tanh(A @ x) * x + sin(x) with A of shape (m, m); the size is the Jacobian's
  number of elements, m * m.
- Sparse: a 1-D diffusion-reaction residual, f(x)_i = x_i - 2 x_(i+1) + x_(i+2) + sin(x_(i+1)) x_(i+1),
  whose Jacobian is tridiagonal; the size is the number of elements of x. pushforward detects the
  pattern once (`pf.func.jacobian_sparsity`) and `pf.func.sparse_jacfwd` computes every nonzero in
  one vector-mode pass of three colors; by hand it is three diagonals put into a CSR matrix.

>>> import numpy as np
>>> from pushforward.bench.jacobians import dense_setup, numpy_dense_jacobian
>>> A, x = dense_setup(16)
>>> numpy_dense_jacobian(A, x).shape
(4, 4)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

import pushforward as pf
from ..func import jacfwd as _jacfwd, jacrev as _jacrev
from .libraries import pf_feature
from .workload import Workload, inputs, jax_ready, tensors

__all__ = [
    "dense_setup",
    "dense_map",
    "numpy_dense_jacobian",
    "residual",
    "numpy_sparse_jacobian",
    "WORKLOADS",
]


def dense_setup(n: int) -> list[np.ndarray]:
    """A (m, m) and x (m,) for a Jacobian of about n elements (m = isqrt(n))."""
    m = max(1, math.isqrt(n))
    A, x = inputs(2, (m, m), (m,))
    return [A / np.sqrt(m), x]


def dense_map(lib: Any, A: Any, x: Any) -> Any:
    """f(x) = tanh(A @ x) * x + sin(x) in library `lib`."""
    return lib.tanh(A @ x) * x + lib.sin(x)


def numpy_dense_jacobian(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The Jacobian of `dense_map` by hand: diag(1 - tanh^2) A diag-scaled by x, plus a diagonal."""
    t = np.tanh(A @ x)
    J = ((1 - t * t) * x)[:, None] * A
    J[np.diag_indices_from(J)] += t + np.cos(x)
    return J


def residual(lib: Any, x: Any) -> Any:
    """The diffusion-reaction residual (length n - 2) in library `lib`."""
    mid = x[1:-1]
    return x[:-2] - 2 * mid + x[2:] + lib.sin(mid) * mid


def numpy_sparse_jacobian(x: np.ndarray) -> sp.csr_array:
    """The residual's tridiagonal Jacobian by hand, as a CSR matrix of shape (n - 2, n)."""
    mid = x[1:-1]
    n = len(x)
    diag = -2 + np.cos(mid) * mid + np.sin(mid)
    ones = np.ones(n - 2)
    return sp.csr_array(sp.diags_array([ones, diag, ones], offsets=[0, 1, 2], shape=(n - 2, n)))


# ---- dense


def _pf_dense(transform):
    jac = transform(lambda x, A: dense_map(pf, A, x))

    def build(n):
        A, x = dense_setup(n)
        return jac, tensors(x, A)

    return build


def _np_dense(n):
    A, x = dense_setup(n)
    return lambda: numpy_dense_jacobian(A, x)


def _torch_dense(kind):
    def build(torch, n):
        A, x = (torch.from_numpy(a) for a in dense_setup(n))
        jac = getattr(torch.func, kind)(lambda z: dense_map(torch, A, z))
        return lambda: jac(x)

    return build


def _jax_dense(kind):
    def build(jax, n):
        A, x = (jax.numpy.asarray(a) for a in dense_setup(n))
        jac = jax.jit(getattr(jax, kind)(lambda z, B: dense_map(jax.numpy, B, z)))
        return jax_ready(jac, x, A)

    return build


# ---- sparse


def _sparse_x(n: int) -> np.ndarray:
    return inputs(3, (max(n, 3),))[0]


def _pf_sparse(n):
    f = lambda z: residual(pf, z)  # noqa: E731
    (x,) = tensors(_sparse_x(n))
    pattern = pf_feature("func.jacobian_sparsity")(f, x)  # detected once, reused by every call
    return pf_feature("func.sparse_jacfwd")(f, pattern), (x,)


def _np_sparse(n):
    x = _sparse_x(n)
    return lambda: numpy_sparse_jacobian(x)


_MAP = "f(x) = tanh(A @ x) * x + sin(x)"
_JAC = "elements of the Jacobian"
WORKLOADS = [
    Workload(
        "jacfwd",
        f"Jacobian of {_MAP} by forward mode (jacfwd)",
        _JAC,
        _pf_dense(_jacfwd),
        _np_dense,
        _torch_dense("jacfwd"),
        _jax_dense("jacfwd"),
    ),
    Workload(
        "jacrev",
        f"Jacobian of {_MAP} by reverse mode (jacrev)",
        _JAC,
        _pf_dense(_jacrev),
        _np_dense,
        _torch_dense("jacrev"),
        _jax_dense("jacrev"),
    ),
    Workload(
        "sparse-jac",
        "tridiagonal Jacobian of a diffusion-reaction residual, from detected sparsity (sparse_jacfwd)",
        "elements of x",
        _pf_sparse,
        _np_sparse,
        max_size=2**18,
        min_size=3,
        compilable=False,
        not_applicable={
            "compiled": "pf.compile returns tensors, not scipy.sparse matrices",
            "torch": "PyTorch has no sparse Jacobian transform",
            "jax": "JAX has no sparse Jacobian transform",
        },
    ),
]
