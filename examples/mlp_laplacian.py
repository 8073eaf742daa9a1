"""The Laplacian of a small MLP f: R^32 -> R by Taylor mode, against the trace of its Hessian.

    Laplacian f(x) = sum_i d^2/dt^2 f(x + t e_i) at t = 0

`pf.func.jet` gives every second directional derivative in one pass of order 2 per direction:
here all 32 basis directions at once, by running the network on a batch of 32 copies of x, copy i
moving along e_i (the curve's first term is the identity matrix). The same through `func.vmap`
over the directions gives the same numbers. `hessian(f)(x).trace()` builds the whole 32 x 32
Hessian to read its diagonal.

Run: python examples/mlp_laplacian.py
"""

from __future__ import annotations

import time

import numpy as np

import pushforward as pf
from pushforward.func import hessian, jet, vmap

DIM, WIDTH = 32, 64


def make_mlp(seed: int = 0, dim: int = DIM, width: int = WIDTH):
    """f(x) = w3 . tanh(W2 tanh(W1 x + b1) + b2), for x of shape (dim,) or a batch (B, dim)."""
    rng = np.random.default_rng(seed)
    W1 = pf.tensor(rng.standard_normal((width, dim)) / np.sqrt(dim))
    b1 = pf.tensor(rng.standard_normal(width) * 0.1)
    W2 = pf.tensor(rng.standard_normal((width, width)) / np.sqrt(width))
    b2 = pf.tensor(rng.standard_normal(width) * 0.1)
    w3 = pf.tensor(rng.standard_normal(width) / np.sqrt(width))

    def f(x):
        h = pf.tanh(x @ W1.mT + b1)
        h = pf.tanh(h @ W2.mT + b2)
        return h @ w3

    return f


def laplacian_jet(f, x: pf.Tensor) -> pf.Tensor:
    """sum_i d^2/dt^2 f(x + t e_i): one jet of order 2 over the batch of the basis directions."""
    n = x.shape[0]
    X = x.expand(n, n)  # row i: x, moving along e_i
    _, (_, second) = jet(f, (X,), ([pf.eye(n, dtype=x.dtype), pf.zeros(n, n, dtype=x.dtype)],))
    return second.sum()


def laplacian_jet_vmap(f, x: pf.Tensor) -> pf.Tensor:
    """The same, with func.vmap over the directions."""
    n = x.shape[0]
    zero = pf.zeros(n, dtype=x.dtype)
    per_direction = vmap(lambda v: jet(f, (x,), ([v, zero],))[1][1])
    return per_direction(pf.eye(n, dtype=x.dtype)).sum()


def laplacian_hessian(f, x: pf.Tensor) -> pf.Tensor:
    return hessian(f)(x).trace()


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(dim: int = DIM, width: int = WIDTH, repeat: int = 5, verbose: bool = True) -> dict:
    f = make_mlp(0, dim, width)
    x = pf.tensor(np.random.default_rng(1).standard_normal(dim))
    lap_jet = float(laplacian_jet(f, x))
    lap_vmap = float(laplacian_jet_vmap(f, x))
    lap_hess = float(laplacian_hessian(f, x))
    res = {
        "dim": dim,
        "laplacian_jet": lap_jet,
        "laplacian_jet_vmap": lap_vmap,
        "laplacian_hessian_trace": lap_hess,
        "rel_diff": abs(lap_jet - lap_hess) / max(abs(lap_hess), 1e-300),
        "rel_diff_vmap": abs(lap_vmap - lap_hess) / max(abs(lap_hess), 1e-300),
        "seconds_jet": _best(lambda: laplacian_jet(f, x), repeat),
        "seconds_hessian": _best(lambda: laplacian_hessian(f, x), repeat),
    }
    if verbose:
        print(f"Laplacian of an MLP {dim} -> {width} -> {width} -> 1 (tanh)")
        print(f"  jet (batched basis directions): {lap_jet:.15g}  {res['seconds_jet'] * 1e3:.2f} ms")
        print(f"  jet under vmap:                 {lap_vmap:.15g}")
        print(f"  hessian(f)(x).trace():          {lap_hess:.15g}  {res['seconds_hessian'] * 1e3:.2f} ms")
        print(
            f"  relative difference {res['rel_diff']:.1e}; time ratio {res['seconds_jet'] / res['seconds_hessian']:.3f}"
        )
    return res


if __name__ == "__main__":
    main()
