"""Sparse Jacobians and Hessians: paired ratios, measured in one run, alternating the two sides.

- colors of the 2D Brusselator Jacobian, N = 32 and 64 (n = 2,048 and 8,192): target <= 12;
- sparse_jacfwd (detection cached) vs dense jacfwd, n = 2,048: target <= 0.02x;
- sparse_jacfwd vs SciPy's approx_derivative(sparsity=...) (finite differences, same pattern and
  coloring work), n = 8,192: target <= 2.0x;
- jacobian_sparsity vs one evaluation of f, n = 8,192: target <= 20x;
- star colors of a tridiagonal Hessian, n = 10,000: target <= 3.

NumPy's BLAS runs on one thread (the figures are per core). Run:
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sparse.py
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize._numdiff import approx_derivative, group_columns  # noqa: E402

import pushforward as pf  # noqa: E402
from pushforward.func import (  # noqa: E402
    column_coloring,
    hessian_sparsity,
    jacfwd,
    jacobian_sparsity,
    sparse_jacfwd,
    star_coloring,
)
from bench_functional import interleaved as paired  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
from brusselator_sparse import initial_state, make_rhs  # noqa: E402


def colors() -> None:
    for n in (32, 64):
        f, y = make_rhs(n), pf.as_tensor(initial_state(n))
        k = int(column_coloring(jacobian_sparsity(f, y)).max()) + 1
        print(f"Brusselator N={n} (n={2 * n * n}): {k} colors (target <= 12)")


def versus_dense() -> None:
    n = 32
    f, y = make_rhs(n), pf.as_tensor(initial_state(n))
    sj, dj = sparse_jacfwd(f), jacfwd(f)
    sj(y)  # detection and coloring, cached from here on
    err = np.abs(sj(y).toarray() - dj(y).numpy()).max()
    # alternating; the cheap side gets ten samples per round (its best is the one that ran alone)
    t_s, t_d = np.inf, np.inf
    for _ in range(4):
        t_d = min(t_d, paired([lambda: dj(y)], 1, rounds=1)[0])
        t_s = min(t_s, paired([lambda: sj(y)], 1, rounds=10)[0])
    print(f"sparse_jacfwd vs dense jacfwd, n={2 * n * n}: {t_s / t_d:.4f}x (target <= 0.02x), max diff {err:.1e}")


def versus_finite_differences() -> None:
    n = 64
    f = make_rhs(n)
    y0 = initial_state(n)
    y = pf.as_tensor(y0)
    pat = jacobian_sparsity(f, y)
    groups = group_columns(pat)
    sj = sparse_jacfwd(f, pattern=pat)

    def fnp(v):
        return f(pf.as_tensor(v)).numpy()

    sj(y0)
    exact = sj(y0)
    fd = approx_derivative(fnp, y0, sparsity=(pat, groups), method="2-point")
    t_s, t_fd = paired([lambda: sj(y0), lambda: approx_derivative(fnp, y0, sparsity=(pat, groups))], 10)
    print(
        f"sparse_jacfwd vs approx_derivative(sparsity=...), n={2 * n * n}: {t_s / t_fd:.2f}x (target <= 2.0x); "
        f"{int(column_coloring(pat).max()) + 1} vs {int(groups.max()) + 1} groups; "
        f"FD error {abs(fd - exact).max():.1e}, ours exact"
    )


def detection_cost() -> None:
    n = 64
    f, y = make_rhs(n), pf.as_tensor(initial_state(n))
    # one call per sample, many rounds: on a shared machine the best sample is the one that ran alone
    t_d, t_f = paired([lambda: jacobian_sparsity(f, y), lambda: f(y)], 1, rounds=25)
    print(f"jacobian_sparsity vs one evaluation of f, n={2 * n * n}: {t_d / t_f:.1f}x (target <= 20x)")


def star_colors() -> None:
    n = 10_000

    def f(x):
        return ((x[1:] - x[:-1] ** 2) ** 2).sum() + (x**4).sum()

    pat = hessian_sparsity(f, pf.zeros(n))
    print(f"star colors of a tridiagonal Hessian, n={n}: {int(star_coloring(pat).max()) + 1} (target <= 3)")


if __name__ == "__main__":
    colors()
    versus_dense()
    versus_finite_differences()
    detection_cost()
    star_colors()
