"""Second derivatives and whole Jacobians: hvp against the gradient, jacfwd against jacrev, in one run.

- hvp of the Rosenbrock sum on n = 100,000 by forward-over-reverse vs the gradient alone
  (and reverse-over-reverse for comparison);
- jacfwd of f(x) = tanh(A @ x) * x + sin(x), n = 128: time vs the primal and vs jacrev.
Run: python benchmarks/bench_functional.py [--reuse-memory]
(--reuse-memory first calls pf.memory.reuse_freed_memory(), the opt-in allocator setting.)
"""

from __future__ import annotations

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.bench.jacobians import dense_map
from pushforward.bench.timing import TIMERS, paired


def interleaved(fns: list, number: int, rounds: int = 7) -> list:
    """Best wall time per call of each function, measured in alternation (`pushforward.bench.timing.paired`)."""
    return paired(fns, number, rounds, TIMERS["wall"])[0]


def best(fn, number: int, repeat: int = 5) -> float:
    return interleaved([fn], number, repeat)[0]


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def gradient(x0):
    x = x0.detach().requires_grad_()
    (g,) = pf.autograd.grad(rosenbrock(x), x)
    return g


def hvp_fwd_over_rev(x0, v):
    with fwAD.dual_level():
        x = fwAD.make_dual(x0.detach().requires_grad_(), v)
        (g,) = pf.autograd.grad(rosenbrock(x), x)
        return fwAD.unpack_dual(g).tangent


def hvp_functional(x0, v):
    """pf.autograd.functional.hvp (fw_mode=True): forward-over-reverse on an untracked level."""
    return pf.autograd.functional.hvp(rosenbrock, x0, v)[1]


def hvp_rev_over_rev(x0, v):
    x = x0.detach().requires_grad_()
    (g,) = pf.autograd.grad(rosenbrock(x), x, create_graph=True)
    (h,) = pf.autograd.grad(g, x, v)
    return h


def torch_line(x0: np.ndarray, v0: np.ndarray, t_grad: float) -> None:
    """The same figures for PyTorch, when it is installed (it is in the test extras)."""
    try:
        import torch
    except ImportError:
        print("  (PyTorch not installed: no comparison)")
        return
    x, v = torch.from_numpy(x0.copy()), torch.from_numpy(v0.copy())

    def grad_fn(x):
        return torch.func.grad(rosenbrock)(x)

    def t_gradient():
        xx = x.detach().requires_grad_()
        return torch.autograd.grad(rosenbrock(xx), xx)[0]

    def t_fwd_over_rev():
        return torch.func.jvp(grad_fn, (x,), (v,))[1]

    def t_rev_over_rev():
        xx = x.detach().requires_grad_()
        (g,) = torch.autograd.grad(rosenbrock(xx), xx, create_graph=True)
        return torch.autograd.grad(g, xx, v)[0]

    tg, tf, tr = interleaved([t_gradient, t_fwd_over_rev, t_rev_over_rev], 5)
    print(
        f"  PyTorch {torch.__version__}: gradient {tg * 1e3:.2f} ms ({tg / t_grad:.2f}x ours); forward-over-reverse "
        f"{tf / tg:.2f}x its gradient, reverse-over-reverse {tr / tg:.2f}x"
    )


def main() -> None:
    import sys

    if "--reuse-memory" in sys.argv:
        print("allocator: pf.memory.reuse_freed_memory() ->", pf.memory.reuse_freed_memory())
    rng = np.random.default_rng(0)
    n = 100_000
    x0 = pf.tensor(rng.random(n))
    v = pf.tensor(rng.standard_normal(n))
    h1, h2, h3 = hvp_fwd_over_rev(x0, v), hvp_rev_over_rev(x0, v), hvp_functional(x0, v)
    assert np.allclose(h1.numpy(), h2.numpy()) and np.allclose(h1.numpy(), h3.numpy()), "the hvps disagree"
    t_g, t_fn, t_fr, t_rr = interleaved(
        [
            lambda: gradient(x0),
            lambda: hvp_functional(x0, v),
            lambda: hvp_fwd_over_rev(x0, v),
            lambda: hvp_rev_over_rev(x0, v),
        ],
        5,
    )
    print(
        f"Rosenbrock n={n}: gradient {t_g * 1e3:.2f} ms; hvp forward-over-reverse: functional.hvp "
        f"{t_fn / t_g:.2f}x the gradient (target <= 2x), by hand with a tracked level {t_fr / t_g:.2f}x; "
        f"reverse-over-reverse {t_rr / t_g:.2f}x"
    )
    # Peak memory matters for time too: without allocator tuning, fresh memory is page-faulted.
    peaks = [
        pf.memory.peak_bytes(f) / x0._data.nbytes
        for f in (lambda: gradient(x0), lambda: hvp_functional(x0, v), lambda: hvp_rev_over_rev(x0, v))
    ]
    print(
        f"  peak memory in arrays of n elements: gradient {peaks[0]:.1f}, functional.hvp {peaks[1]:.1f}, "
        f"reverse-over-reverse {peaks[2]:.1f}"
    )
    torch_line(x0.numpy(), v.numpy(), t_g)

    from pushforward.func import jacfwd, jacrev

    m = 128
    A = pf.tensor(rng.standard_normal((m, m)) / np.sqrt(m))
    x = pf.tensor(rng.standard_normal(m))

    def f(x):
        return dense_map(pf, A, x)

    jf, jr = jacfwd(f)(x), jacrev(f)(x)
    assert np.allclose(jf.numpy(), jr.numpy())
    t_p = best(lambda: f(x), 2000)
    t_f = best(lambda: jacfwd(f)(x), 20)
    t_r = best(lambda: jacrev(f)(x), 20)
    print(
        f"jacfwd n={m}: {t_f * 1e3:.2f} ms = {t_f / t_p:.0f}x the primal; jacrev {t_r * 1e3:.2f} ms "
        f"(jacfwd/jacrev = {t_f / t_r:.2f})"
    )


if __name__ == "__main__":
    main()
