"""The dispatch-overhead table: the 32-op chain and Rosenbrock, as paired ratios measured in one run.

Each row times its two sides in alternation (`pushforward.bench.timing.paired`: CPU time of the
process, the median of per-round ratios) and prints the ratio; the whole table is measured
`--repeat` times and each row shows the median (and the range) of its ratios. The torch rows need
PyTorch (the test extras); without it they are skipped with a message. The chain is
y = sin(y) * y + tanh(y), eight times (32 ops; `pushforward.bench.chain`). Two "floor" rows time
the same array passes written by hand in NumPy against torch: no autodiff on NumPy's kernels can
beat them (NumPy's float64 sin and cos take about 2.5x torch's).

`pushforward bench` measures the same chain (and more workloads) across sizes and libraries.

Run: python benchmarks/bench_chain.py [--repeat 3] [--rows chain16,fb16,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward import func
from pushforward.bench.chain import chain, numpy_grad, numpy_jvp, numpy_jvp_by_op
from pushforward.bench.libraries import Unavailable, import_torch
from pushforward.bench.timing import paired

try:
    torch = import_torch()  # one thread: the figures are per core, as NumPy's ufuncs are
    import torch.autograd.forward_ad as tfwAD
except Unavailable:  # the torch rows need the test extras
    torch = None


def ratio(fns: list, number: int) -> float:
    """Time of the second function over the first's, in alternation (median over 7 rounds)."""
    return paired(fns, number, rounds=7)[1][1]


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _inputs(n: int):
    a = np.random.default_rng(0).random(n)
    v = np.random.default_rng(1).random(n)
    return a, v


def nograd16() -> float:
    a, _ = _inputs(16)
    x = pf.tensor(a)
    return ratio([lambda: chain(np, a), lambda: chain(pf, x)], 400)


def recorded16() -> float:
    a, _ = _inputs(16)
    xg = pf.tensor(a, requires_grad=True)
    return ratio([lambda: chain(np, a), lambda: chain(pf, xg)], 400)


def _torch_fb(a):
    tg = torch.from_numpy(a.copy()).requires_grad_()
    return lambda: chain(torch, tg).sum().backward()


def _torch_jvp(a, v):
    ta, tv = torch.from_numpy(a.copy()), torch.from_numpy(v.copy())

    def run():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(chain(torch, tfwAD.make_dual(ta, tv))).tangent

    return run


def _fb(n: int, number: int) -> float:
    a, _ = _inputs(n)
    xg = pf.tensor(a, requires_grad=True)
    return ratio([_torch_fb(a), lambda: chain(pf, xg).sum().backward()], number)


def _jvp(n: int, number: int) -> float:
    a, v = _inputs(n)
    x, xv = pf.tensor(a), pf.tensor(v)

    def pf_jvp():
        with fwAD.dual_level():
            return fwAD.unpack_dual(chain(pf, fwAD.make_dual(x, xv))).tangent

    return ratio([_torch_jvp(a, v), pf_jvp], number)


def floor_fb() -> float:
    a, _ = _inputs(2**16)
    return ratio([_torch_fb(a), lambda: numpy_grad(a)], 5)


def floor_jvp() -> float:
    a, v = _inputs(2**16)
    return ratio([_torch_jvp(a, v), lambda: numpy_jvp(a, v)], 5)


def floor_ratio_fb() -> float:
    """forward + backward at n=2^16 against the same passes written by hand in NumPy (the floor)."""
    a, _ = _inputs(2**16)
    xg = pf.tensor(a, requires_grad=True)

    def run():
        xg.grad = None
        chain(pf, xg).sum().backward()

    return ratio([lambda: numpy_grad(a), run], 5)


def floor_ratio_jvp() -> float:
    """The jvp at n=2^16 against the same passes written by hand in NumPy (the floor)."""
    a, v = _inputs(2**16)
    x, xv = pf.tensor(a), pf.tensor(v)

    def pf_jvp():
        with fwAD.dual_level():
            return fwAD.unpack_dual(chain(pf, fwAD.make_dual(x, xv))).tangent

    return ratio([lambda: numpy_jvp(a, v), pf_jvp], 5)


def elision_jvp() -> float:
    """The hand-written jvp op by op (each result named) against the fused hand-written one."""
    a, v = _inputs(2**16)
    return ratio([lambda: numpy_jvp(a, v), lambda: numpy_jvp_by_op(a, v)], 5)


def _rosen():
    rng = np.random.default_rng(0)
    n = 100_000
    x0 = pf.tensor(rng.random(n))
    v = pf.tensor(rng.standard_normal(n))

    def gradient():
        x = x0.detach().requires_grad_()
        return pf.autograd.grad(rosenbrock(x), x)[0]

    return x0, v, gradient


def jvp_grad() -> float:
    x0, v, gradient = _rosen()
    return ratio([gradient, lambda: func.jvp(func.grad(rosenbrock), (x0,), (v,))[1]], 5)


def hvp() -> float:
    x0, v, gradient = _rosen()
    return ratio([gradient, lambda: pf.autograd.functional.hvp(rosenbrock, x0, v)[1]], 5)


# (key, label, target, needs torch, measure)
ROWS = [
    ("nograd16", "32-op chain n=16, no grad, vs NumPy", 2.0, False, nograd16),
    ("rec16", "same, recorded forward (requires_grad) vs NumPy", 5.0, False, recorded16),
    ("fb16", "forward + backward of the chain vs torch, n=16", 1.2, True, lambda: _fb(16, 200)),
    ("fb64k", "forward + backward vs torch, n=2^16", 1.0, True, lambda: _fb(2**16, 5)),
    ("jvp16", "jvp of the chain vs torch, n=16", 0.8, True, lambda: _jvp(16, 200)),
    ("jvp64k", "jvp of the chain vs torch, n=2^16", 1.0, True, lambda: _jvp(2**16, 5)),
    ("jvpgrad", "func.jvp(func.grad(rosenbrock)) vs its gradient, n=1e5", 2.0, False, jvp_grad),
    ("hvp", "functional.hvp vs gradient, n=1e5", 1.8, False, hvp),
    # what NumPy's kernels allow at all (no Python overhead, same passes)
    ("floorfb", "(floor) forward + backward by hand in NumPy vs torch, n=2^16", 1.0, True, floor_fb),
    ("floorjvp", "(floor) jvp by hand in NumPy vs torch, n=2^16", 1.0, True, floor_jvp),
    # the large-n rows: the same computation against that floor directly
    ("fbnp64k", "forward + backward vs the same by hand in NumPy, n=2^16", 1.05, False, floor_ratio_fb),
    ("jvpnp64k", "jvp vs the same by hand in NumPy, n=2^16", 1.05, False, floor_ratio_jvp),
    # what the fused floor owes to NumPy's reuse of a fused expression's temporaries
    ("elision", "(floor) jvp by hand in NumPy, op by op vs fused, n=2^16", 1.05, False, elision_jvp),
]


def main(argv: list | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="measure the table this many times; print medians")
    p.add_argument("--rows", default="", help="comma-separated row keys: " + ",".join(r[0] for r in ROWS))
    a = p.parse_args(argv)
    keys = set(a.rows.split(",")) if a.rows else None
    rows = [r for r in ROWS if keys is None or r[0] in keys]
    results: dict = {r[0]: [] for r in rows}
    for _ in range(a.repeat):
        for key, _label, _target, needs_torch, fn in rows:
            if needs_torch and torch is None:
                continue
            results[key].append(fn())
    width = max(len(r[1]) for r in rows)
    print(f"{'figure':<{width}}  median   (min-max over {a.repeat} runs)  target")
    for key, label, target, needs_torch, _fn in rows:
        if needs_torch and torch is None:
            print(f"{label:<{width}}  skipped: PyTorch is not installed")
            continue
        rs = results[key]
        med = statistics.median(rs)
        flag = "ok" if med <= target else "MISSED"
        print(f"{label:<{width}}  {med:5.2f}x  ({min(rs):.2f}-{max(rs):.2f})            <= {target}x  {flag}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
