"""Taylor mode (`pf.func.jet`): paired ratios, measured in one run, alternating the two sides.

- the 32-op chain (y = sin(y) * y + tanh(y), 8 times; n = 16): jet to order 6 vs 6 nested dual
  levels giving the same 6th derivative (target <= 0.15x); jet to order 16 vs order 1 (<= 40x);
- the Laplacian of an MLP 32 -> 64 -> 64 -> 1 by one jet over the basis directions vs
  hessian(f)(x).trace() (<= 0.5x);
- the Taylor integrator (order 20) vs SciPy's DOP853 on one Kepler period at tolerance 1e-12:
  steps, errors and times (examples/taylor_kepler.py).

NumPy's BLAS runs on one thread (the figures are per core). Run:
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_taylor.py
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pushforward as pf  # noqa: E402
import pushforward.autograd.forward_ad as fwAD  # noqa: E402
from pushforward.func import jet  # noqa: E402
from bench_functional import interleaved as paired  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import mlp_laplacian  # noqa: E402
import taylor_kepler  # noqa: E402

N = 16


def chain(y):
    for _ in range(8):  # 4 ops a round: sin, mul, tanh, add
        y = pf.sin(y) * y + pf.tanh(y)
    return y


def nested(f, x, v, k):
    """The k-th derivative of f(x + t v) at 0 by k nested dual levels."""
    if k == 0:
        return f(x)
    with fwAD.dual_level():
        return fwAD.unpack_dual(nested(f, fwAD.make_dual(x, v), v, k - 1)).tangent


def chain_rows() -> None:
    x, v = pf.tensor(np.linspace(0.1, 0.9, N)), pf.ones(N)

    def by_jet(K):
        return jet(chain, (x,), ([v] + [pf.zeros(N)] * (K - 1),))[1][-1]

    np.testing.assert_allclose(by_jet(6).numpy(), nested(chain, x, v, 6).numpy(), rtol=1e-8)
    t_jet, t_nested = paired([lambda: by_jet(6), lambda: nested(chain, x, v, 6)], 1, rounds=5)
    print(
        f"chain of 32 ops, n={N}: jet order 6 {t_jet * 1e3:.1f} ms vs 6 nested dual levels "
        f"{t_nested * 1e3:.1f} ms: {t_jet / t_nested:.3f}x (target <= 0.15x)"
    )
    t1, t16 = paired([lambda: by_jet(1), lambda: by_jet(16)], 3, rounds=7)
    print(f"  jet order 16 {t16 * 1e3:.1f} ms vs order 1 {t1 * 1e3:.2f} ms: {t16 / t1:.1f}x (target <= 40x)")


def laplacian_rows() -> None:
    f = mlp_laplacian.make_mlp(0)
    x = pf.tensor(np.random.default_rng(1).standard_normal(mlp_laplacian.DIM))
    a, b = float(mlp_laplacian.laplacian_jet(f, x)), float(mlp_laplacian.laplacian_hessian(f, x))
    assert abs(a - b) <= 1e-10 * abs(b)
    t_jet, t_hess = paired(
        [lambda: mlp_laplacian.laplacian_jet(f, x), lambda: mlp_laplacian.laplacian_hessian(f, x)], 5
    )
    print(
        f"MLP Laplacian, input dim {mlp_laplacian.DIM}: jet {t_jet * 1e3:.2f} ms vs hessian().trace() "
        f"{t_hess * 1e3:.2f} ms: {t_jet / t_hess:.3f}x (target <= 0.5x)"
    )


def integrator_rows() -> None:
    r = taylor_kepler.main(order=20, tol=1e-12, verbose=False)
    same = r["dop853_same_accuracy"]
    print(
        f"Kepler, one period, tolerance 1e-12: Taylor order 20 {r['taylor_steps']} steps, error "
        f"{r['taylor_error']:.1e}, {r['taylor_seconds']:.2f} s; DOP853 {r['dop853_steps']} steps "
        f"({r['dop853_rhs_evaluations']} f evaluations), error {r['dop853_error']:.1e}, {r['dop853_seconds']:.3f} s; "
        f"DOP853 at tolerance {same['tol']:g}: {same['steps']} steps, error {same['error']:.1e}"
    )


if __name__ == "__main__":
    chain_rows()
    laplacian_rows()
    integrator_rows()
