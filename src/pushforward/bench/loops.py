"""Loop kernels: scientific NumPy that loops over rows and elements and writes slices in place.

Four kernels, each written once NumPy-style over any library with in-place slice assignment
(NumPy, pushforward, PyTorch; JAX's versions write with `.at[...].set`), and the jvp of each:

- `stencil`: a Jacobi 2-d time loop (five-point average of the interior, two buffers, in place);
- `lu`: a right-looking LU factorisation without pivoting, one row and column per step;
- `recurrence`: h_t = tanh(W h_(t-1) + x_t), one row of h written per step;
- `elements`: a Cholesky factorisation element by element (scalar reads, dot products of rows).

The size is the matrix side (the grid side for the stencil, the hidden size for the recurrence).
NumPy's column is the jvp by hand: the primal loop with the tangent of each statement beside it.

>>> import numpy as np
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> bool(np.allclose(elements(np, a) @ elements(np, a).T, a))
True
>>> low_up = lu(np, a)
>>> bool(np.allclose((np.tril(low_up, -1) + np.eye(2)) @ np.triu(low_up), a))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pushforward as pf
from .workload import Workload, inputs, jax_ready, tensors

__all__ = ["stencil", "lu", "recurrence", "elements", "numpy_jvps", "WORKLOADS", "STEPS", "TIME"]

STEPS = 10  # time steps of the stencil
TIME = 32  # time steps of the recurrence


def _copy(lib: Any, a: Any) -> Any:
    return a.clone() if hasattr(a, "clone") else a.copy()


def stencil(lib: Any, a: Any, steps: int = STEPS) -> Any:
    """Jacobi 2-d: `steps` sweeps of the five-point average, ping-ponging two grids."""
    a = _copy(lib, a)
    b = _copy(lib, a)
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a


def lu(lib: Any, a: Any) -> Any:
    """L and U packed in one matrix (L's unit diagonal implied), without pivoting."""
    a = _copy(lib, a)
    n = a.shape[0]
    for k in range(n - 1):
        a[k + 1 :, k] = a[k + 1 :, k] / a[k, k]
        a[k + 1 :, k + 1 :] = a[k + 1 :, k + 1 :] - a[k + 1 :, k : k + 1] * a[k : k + 1, k + 1 :]
    return a


def recurrence(lib: Any, x: Any, w: Any) -> Any:
    """The states h_t = tanh(W h_(t-1) + x_t) of a sequence x (time along the first dim), h_0 = tanh(x_0)."""
    h = lib.zeros_like(x)
    h[0] = lib.tanh(x[0])
    for t in range(1, x.shape[0]):
        h[t] = lib.tanh(w @ h[t - 1] + x[t])
    return h


def elements(lib: Any, a: Any) -> Any:
    """The Cholesky factor of a symmetric positive-definite a, one element at a time."""
    n = a.shape[0]
    low = lib.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j] - low[i, :j] @ low[j, :j]
            low[i, j] = lib.sqrt(s) if i == j else s / low[j, j]
    return low


# ---- the jvps by hand (NumPy)


def _stencil_jvp(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    return stencil(np, v)  # (linear: the tangent is the stencil of the tangent)


def _lu_jvp(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    a, da = a.copy(), v.copy()
    n = a.shape[0]
    for k in range(n - 1):
        piv, dpiv = a[k, k], da[k, k]
        col = a[k + 1 :, k] / piv
        dcol = (da[k + 1 :, k] - col * dpiv) / piv
        a[k + 1 :, k], da[k + 1 :, k] = col, dcol
        da[k + 1 :, k + 1 :] -= dcol[:, None] * a[k, k + 1 :] + col[:, None] * da[k, k + 1 :]
        a[k + 1 :, k + 1 :] -= col[:, None] * a[k, k + 1 :]
    return da


def _recurrence_jvp(x: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    h, dh = np.zeros_like(x), np.zeros_like(x)
    h[0] = np.tanh(x[0])
    dh[0] = (1 - h[0] * h[0]) * v[0]
    for t in range(1, x.shape[0]):
        h[t] = np.tanh(w @ h[t - 1] + x[t])
        dh[t] = (1 - h[t] * h[t]) * (w @ dh[t - 1] + v[t])
    return dh


def _elements_jvp(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    low, dlow = np.zeros_like(a), np.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j] - low[i, :j] @ low[j, :j]
            ds = v[i, j] - dlow[i, :j] @ low[j, :j] - low[i, :j] @ dlow[j, :j]
            if i == j:
                low[i, j] = np.sqrt(s)
                dlow[i, j] = ds / (2 * low[i, j])
            else:
                low[i, j] = s / low[j, j]
                dlow[i, j] = (ds - low[i, j] * dlow[j, j]) / low[j, j]
    return dlow


numpy_jvps = {"stencil": _stencil_jvp, "lu": _lu_jvp, "recurrence": _recurrence_jvp, "elements": _elements_jvp}


# ---- inputs: the same seeded arrays for every library


def _grid(n: int) -> list:
    return inputs(11, (n, n), (n, n))


def _dominant(n: int) -> list:
    """A diagonally dominant matrix (LU without pivoting is stable on it) and a direction."""
    a, v = inputs(12, (n, n), (n, n))
    return [a + 2 * n * np.eye(n), v]


def _spd(n: int) -> list:
    m, v = inputs(13, (n, n), (n, n))
    return [m @ m.T + n * np.eye(n), v]


def _sequence(n: int) -> list:
    x, v, w = inputs(14, (TIME, n), (TIME, n), (n, n))
    return [x, v, w / np.sqrt(n)]


_KERNELS = {
    "stencil": (stencil, _grid),
    "lu": (lu, _dominant),
    "recurrence": (recurrence, _sequence),
    "elements": (elements, _spd),
}


def _pf(name: str):
    kernel, make = _KERNELS[name]

    def build(n):
        def jvp(x, v, *rest):
            return pf.func.jvp(lambda y: kernel(pf, y, *rest), (x,), (v,))[1]

        return jvp, tensors(*make(n))

    return build


def _np(name: str):
    def build(n):
        args = _KERNELS[name][1](n)
        return lambda: numpy_jvps[name](*args)

    return build


def _torch(name: str):
    kernel, make = _KERNELS[name]

    def build(torch, n):
        import torch.autograd.forward_ad as tfwAD

        x, v, *rest = (torch.from_numpy(a) for a in make(n))

        def run():
            with tfwAD.dual_level():
                return tfwAD.unpack_dual(kernel(torch, tfwAD.make_dual(x, v), *rest)).tangent

        return run

    return build


def _jax_kernel(name: str, jnp):
    """The kernel in JAX: the same statements, each slice write a functional `.at[...].set`."""
    if name == "stencil":

        def f(a):
            b = a
            for _ in range(STEPS):
                b = b.at[1:-1, 1:-1].set(
                    0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
                )
                a = a.at[1:-1, 1:-1].set(
                    0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
                )
            return a

    elif name == "lu":

        def f(a):
            for k in range(a.shape[0] - 1):
                a = a.at[k + 1 :, k].set(a[k + 1 :, k] / a[k, k])
                a = a.at[k + 1 :, k + 1 :].set(a[k + 1 :, k + 1 :] - a[k + 1 :, k : k + 1] * a[k : k + 1, k + 1 :])
            return a

    elif name == "recurrence":

        def f(x, w):
            h = jnp.zeros_like(x).at[0].set(jnp.tanh(x[0]))
            for t in range(1, x.shape[0]):
                h = h.at[t].set(jnp.tanh(w @ h[t - 1] + x[t]))
            return h

    else:

        def f(a):
            low = jnp.zeros_like(a)
            for i in range(a.shape[0]):
                for j in range(i + 1):
                    s = a[i, j] - low[i, :j] @ low[j, :j]
                    low = low.at[i, j].set(jnp.sqrt(s) if i == j else s / low[j, j])
            return low

    return f


def _jax(name: str):
    def build(jax, n):
        jnp = jax.numpy
        f = _jax_kernel(name, jnp)
        x, v, *rest = (jnp.asarray(a) for a in _KERNELS[name][1](n))
        fn = jax.jit(lambda x, v, *rest: jax.jvp(lambda y: f(y, *rest), (x,), (v,))[1])
        return jax_ready(fn, x, v, *rest)

    return build


_TITLES = {
    "stencil": (f"jvp of a Jacobi 2-d stencil, {STEPS} time steps written in place", "grid side", 1024),
    "lu": ("jvp of a row-loop LU factorisation (right-looking, in place)", "matrix side", 256),
    "recurrence": (f"jvp of the recurrence h_t = tanh(W h_(t-1) + x_t), {TIME} steps", "hidden size", 1024),
    "elements": ("jvp of an element-by-element Cholesky factorisation", "matrix side", 32),
}

WORKLOADS = [
    Workload(f"loop-{name}", title, size, _pf(name), _np(name), _torch(name), _jax(name), max_size=top, min_size=4)
    for name, (title, size, top) in _TITLES.items()
]
