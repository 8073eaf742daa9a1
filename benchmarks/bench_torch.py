"""Paired ratios against NumPy and PyTorch (issues 10 and 11), measured in one run.

Each pair of functions is timed in alternation (best of several rounds), so the allocator's
state and the machine's load hit both sides alike; only ratios are printed. PyTorch is in the
test extras; without it the torch rows are skipped.

- 32-op chain (y = sin(y) * y + tanh(y), eight times): no grad and recorded forward vs NumPy;
  forward + backward and jvp vs torch, at n = 16 and n = 2**16;
- `func.jvp(func.grad(rosenbrock))` and `autograd.functional.hvp` vs the gradient, n = 1e5;
- jacfwd / jacrev of tanh(A @ x) * x + sin(x), n = 128, vs torch.func and vs the primal.

Run: python benchmarks/bench_torch.py
"""
from __future__ import annotations

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from bench_functional import interleaved as paired  # best time per call, measured in alternation

try:
    import torch
    import torch.autograd.forward_ad as tfwAD
    torch.set_num_threads(1)  # the figures are per core: NumPy here runs on one thread too
except ImportError:  # the torch rows need the test extras
    torch = None


def chain(lib, y):
    for _ in range(8):
        y = lib.sin(y) * y + lib.tanh(y)
    return y


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def chain_rows() -> None:
    for n, number in ((16, 400), (2 ** 16, 10)):
        a = np.random.default_rng(0).random(n)
        v = np.random.default_rng(1).random(n)
        x, xg, xv = pf.tensor(a), pf.tensor(a, requires_grad=True), pf.tensor(v)
        t_np, t_plain, t_tape = paired([lambda: chain(np, a), lambda: chain(pf, x), lambda: chain(pf, xg)], number)
        print(f"chain n={n}: no grad {t_plain / t_np:.2f}x numpy (target <= 2.0x); "
              f"recorded forward {t_tape / t_np:.2f}x numpy (target <= 5.0x)")
        if torch is None:
            continue
        ta, tv = torch.from_numpy(a.copy()), torch.from_numpy(v.copy())
        tg = ta.clone().requires_grad_()

        def pf_fb():
            chain(pf, xg).sum().backward()

        def torch_fb():
            chain(torch, tg).sum().backward()

        def pf_jvp():
            with fwAD.dual_level():
                return fwAD.unpack_dual(chain(pf, fwAD.make_dual(x, xv))).tangent

        def torch_jvp():
            with tfwAD.dual_level():
                return tfwAD.unpack_dual(chain(torch, tfwAD.make_dual(ta, tv))).tangent

        f_pf, f_t, j_pf, j_t = paired([pf_fb, torch_fb, pf_jvp, torch_jvp], max(1, number // 2))
        target = "1.2" if n == 16 else "1.0"
        target_j = "0.8" if n == 16 else "1.0"
        print(f"  forward + backward vs torch {f_pf / f_t:.2f}x (target <= {target}x); "
              f"jvp vs torch {j_pf / j_t:.2f}x (target <= {target_j}x)")


def hvp_rows() -> None:
    from pushforward import func
    rng = np.random.default_rng(0)
    n = 100_000
    x0 = pf.tensor(rng.random(n))
    v = pf.tensor(rng.standard_normal(n))

    def gradient():
        x = x0.detach().requires_grad_()
        return pf.autograd.grad(rosenbrock(x), x)[0]

    def jvp_of_grad():
        return func.jvp(func.grad(rosenbrock), (x0,), (v,))[1]

    def functional_hvp():
        return pf.autograd.functional.hvp(rosenbrock, x0, v)[1]

    assert np.allclose(jvp_of_grad().numpy(), functional_hvp().numpy())
    t_g, t_jg, t_h = paired([gradient, jvp_of_grad, functional_hvp], 5)
    print(f"Rosenbrock n={n}: func.jvp(func.grad) {t_jg / t_g:.2f}x the gradient (target <= 2.0x); "
          f"functional.hvp {t_h / t_g:.2f}x (target <= 1.8x)")


def jacobian_rows() -> None:
    from pushforward.func import jacfwd, jacrev
    rng = np.random.default_rng(0)
    m = 128
    a, xa = rng.standard_normal((m, m)) / np.sqrt(m), rng.standard_normal(m)
    A, x = pf.tensor(a), pf.tensor(xa)

    def f(x):
        return pf.tanh(A @ x) * x + pf.sin(x)

    t_p, t_f, t_r = paired([lambda: f(x), lambda: jacfwd(f)(x), lambda: jacrev(f)(x)], 10)
    line = f"jacfwd n={m}: {t_f / t_p:.0f}x its primal (target <= 20x)"
    if torch is not None:
        TA, tx = torch.from_numpy(a.copy()), torch.from_numpy(xa.copy())

        def tf(x):
            return torch.tanh(TA @ x) * x + torch.sin(x)

        t_tf, t_tr, t_f2, t_r2 = paired([lambda: torch.func.jacfwd(tf)(tx), lambda: torch.func.jacrev(tf)(tx),
                                         lambda: jacfwd(f)(x), lambda: jacrev(f)(x)], 10)
        line += (f"; vs torch.func.jacfwd {t_f2 / t_tf:.2f}x (target <= 0.5x); "
                 f"jacrev vs torch.func.jacrev {t_r2 / t_tr:.2f}x (target <= 1.0x)")
    print(line)


def main() -> None:
    chain_rows()
    hvp_rows()
    jacobian_rows()


if __name__ == "__main__":
    main()
