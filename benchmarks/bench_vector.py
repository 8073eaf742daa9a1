"""Vector mode: paired ratios, measured in one run, alternating the two sides.

- jacfwd of tanh(A @ x) * x + sin(x), n = 128: vs torch.func.jacfwd and vs its own primal;
- jacrev of the same: vs torch.func.jacrev;
- Hessian of Rosenbrock, n = 64 (jacfwd of jacrev): vs torch.func.hessian;
- per-sample gradients of a 2-layer MLP, batch 64 (vmap(grad)): vs torch.func;
- peak memory (tracemalloc) of a batched jvp of B tangents vs B times one jvp.

NumPy's BLAS and torch run on one thread (the figures are per core). Run:
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vector.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import pushforward as pf  # noqa: E402
import pushforward.autograd.forward_ad as fwAD  # noqa: E402
from pushforward.func import grad, hessian, jacfwd, jacrev, vmap  # noqa: E402
from bench_functional import interleaved as paired  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the torch rows need the test extras
    torch = None


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def jacobian_rows(rng) -> None:
    m = 128
    a, xa = rng.standard_normal((m, m)) / np.sqrt(m), rng.standard_normal(m)
    A, x = pf.tensor(a), pf.tensor(xa)

    def f(v):
        return pf.tanh(A @ v) * v + pf.sin(v)

    jf, jr = jacfwd(f), jacrev(f)
    if torch is None:
        t_p, t_f = paired([lambda: f(x), lambda: jf(x)], 20)
        print(f"jacfwd n={m}: {t_f / t_p:.1f}x its primal (target <= 20x); torch rows skipped (no torch)")
        return
    TA, tx = torch.from_numpy(a.copy()), torch.from_numpy(xa.copy())

    def tf(v):
        return torch.tanh(TA @ v) * v + torch.sin(v)

    tjf, tjr = torch.func.jacfwd(tf), torch.func.jacrev(tf)
    assert np.allclose(jf(x).numpy(), tjf(tx).numpy()) and np.allclose(jr(x).numpy(), tjr(tx).numpy())
    t_p, t_f, t_tf, t_r, t_tr = paired(
        [lambda: f(x), lambda: jf(x), lambda: tjf(tx), lambda: jr(x), lambda: tjr(tx)], 20
    )
    print(
        f"jacfwd n={m}: {t_f / t_p:.1f}x its primal (target <= 20x); {t_f / t_tf:.2f}x torch.func.jacfwd "
        f"(target <= 0.5x)"
    )
    print(f"jacrev n={m}: {t_r / t_tr:.2f}x torch.func.jacrev (target <= 1.0x); {t_r / t_p:.1f}x its primal")


def hessian_row(rng) -> None:
    n = 64
    xa = rng.standard_normal(n)
    x = pf.tensor(xa)
    h = hessian(rosenbrock)
    if torch is None:
        return
    tx = torch.from_numpy(xa.copy())
    th = torch.func.hessian(rosenbrock)
    assert np.allclose(h(x).numpy(), th(tx).numpy())
    t_h, t_th = paired([lambda: h(x), lambda: th(tx)], 10)
    print(f"hessian of Rosenbrock n={n} (jacfwd of jacrev): {t_h / t_th:.2f}x torch.func.hessian (target <= 1.0x)")


def per_sample_row(rng) -> None:
    batch, d_in, d_hidden = 64, 32, 64
    w1, b1, w2 = rng.standard_normal((d_in, d_hidden)) / 6, rng.standard_normal(d_hidden), rng.standard_normal(d_hidden)
    xs, ys = rng.standard_normal((batch, d_in)), rng.standard_normal(batch)

    def loss(p, x, y, lib):
        w1_, b1_, w2_ = p
        return (lib.tanh(x @ w1_ + b1_) @ w2_ - y) ** 2

    params = tuple(pf.tensor(v) for v in (w1, b1, w2))
    X, Y = pf.tensor(xs), pf.tensor(ys)
    ps = vmap(grad(lambda p, x, y: loss(p, x, y, pf)), in_dims=(None, 0, 0))
    if torch is None:
        return
    tparams = tuple(torch.from_numpy(v.copy()) for v in (w1, b1, w2))
    tX, tY = torch.from_numpy(xs.copy()), torch.from_numpy(ys.copy())
    tps = torch.func.vmap(torch.func.grad(lambda p, x, y: loss(p, x, y, torch)), in_dims=(None, 0, 0))
    assert all(np.allclose(a.numpy(), b.numpy()) for a, b in zip(ps(params, X, Y), tps(tparams, tX, tY)))
    t_p, t_t = paired([lambda: ps(params, X, Y), lambda: tps(tparams, tX, tY)], 10)
    print(
        f"per-sample gradients, MLP {d_in}-{d_hidden}-1, batch {batch} (vmap(grad)): {t_p / t_t:.2f}x torch.func "
        f"(target <= 1.5x)"
    )


def memory_row(rng) -> None:
    n, B = 20_000, 16
    x = pf.tensor(rng.standard_normal(n))

    def f(v):
        return (pf.sin(v) * v + pf.tanh(v)).exp()

    def peak(run) -> int:
        tracemalloc.start()
        run()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    def one():
        with fwAD.dual_level():
            fwAD.unpack_dual(f(fwAD.make_dual(x, pf.ones(n)))).tangent

    def batched():
        with fwAD.dual_level(batch=B):
            fwAD.unpack_dual(f(fwAD.make_dual(x, pf.ones(B, n)))).tangent

    p1, pb = peak(one), peak(batched)
    print(f"peak memory of a batched jvp, B={B}, n={n}: {pb / p1:.1f}x one jvp (target <= {B}x)")


def main() -> None:
    rng = np.random.default_rng(0)
    jacobian_rows(rng)
    hessian_row(rng)
    per_sample_row(rng)
    memory_row(rng)


if __name__ == "__main__":
    main()
