"""The performance table of issue 10, as paired ratios measured in one run.

Each row times its two sides in alternation (best of several rounds each, in CPU time of
the process: load and the allocator's state hit both alike) and prints the ratio; the whole table is measured
`--repeat` times and each row shows the median (and the range) of its ratios. The torch
rows need PyTorch (the test extras); without it they are skipped with a message. The
chain is y = sin(y) * y + tanh(y), eight times (32 ops). Two "floor" rows, not in the
issue's table, time the same array passes written by hand in NumPy against torch: no
autodiff on NumPy's kernels can beat them (NumPy's float64 sin and cos take about 2.5x
torch's).

Run: python benchmarks/bench_issue10.py [--repeat 3] [--rows chain16,fb16,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward import func

try:
    import torch
    import torch.autograd.forward_ad as tfwAD

    torch.set_num_threads(1)  # the figures are per core: NumPy here runs on one thread too
except ImportError:  # the torch rows need the test extras
    torch = None


def paired(fns: list, number: int, rounds: int = 7) -> list:
    """Best time per call of each function, measured in alternation. CPU time of this process
    (time.process_time), not wall time: on a machine shared with other jobs, time spent waiting
    for a core is not the code's."""
    res = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            res[i] = min(res[i], timeit.timeit(fn, number=number, timer=time.process_time) / number)
    return res


def chain(lib, y):
    for _ in range(8):
        y = lib.sin(y) * y + lib.tanh(y)
    return y


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _inputs(n: int):
    a = np.random.default_rng(0).random(n)
    v = np.random.default_rng(1).random(n)
    return a, v


def nograd16() -> float:
    a, _ = _inputs(16)
    x = pf.tensor(a)
    t_np, t_pf = paired([lambda: chain(np, a), lambda: chain(pf, x)], 400)
    return t_pf / t_np


def recorded16() -> float:
    a, _ = _inputs(16)
    xg = pf.tensor(a, requires_grad=True)
    t_np, t_pf = paired([lambda: chain(np, a), lambda: chain(pf, xg)], 400)
    return t_pf / t_np


def _fb(n: int, number: int) -> float:
    a, _ = _inputs(n)
    xg = pf.tensor(a, requires_grad=True)
    tg = torch.from_numpy(a.copy()).requires_grad_()

    def pf_fb():
        chain(pf, xg).sum().backward()

    def torch_fb():
        chain(torch, tg).sum().backward()

    t_pf, t_t = paired([pf_fb, torch_fb], number)
    return t_pf / t_t


def _jvp(n: int, number: int) -> float:
    a, v = _inputs(n)
    x, xv = pf.tensor(a), pf.tensor(v)
    ta, tv = torch.from_numpy(a.copy()), torch.from_numpy(v.copy())

    def pf_jvp():
        with fwAD.dual_level():
            return fwAD.unpack_dual(chain(pf, fwAD.make_dual(x, xv))).tangent

    def torch_jvp():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(chain(torch, tfwAD.make_dual(ta, tv))).tangent

    t_pf, t_t = paired([pf_jvp, torch_jvp], number)
    return t_pf / t_t


def numpy_fb(a):
    """Forward + backward of the chain written by hand in NumPy, one array pass per op of the
    formulas pushforward runs (the floor of any per-op autodiff on NumPy's kernels)."""
    y, tape = a, []
    for _ in range(8):
        s, t = np.sin(y), np.tanh(y)
        tape.append((y, s, t))
        y = s * y + t
    g = np.ones_like(y)
    for y, s, t in reversed(tape):
        gy = g * (1 - t * t)  # tanh
        gy += g * s  # mul, the y operand
        gy += (g * y) * np.cos(y)  # mul, the sin(y) operand, then sin
        g = gy
    return g


def numpy_jvp(a, v):
    """The chain's jvp written by hand in NumPy, one pass per op of the tangent formulas."""
    y, ty = a, v
    for _ in range(8):
        s = np.sin(y)
        ts = ty * np.cos(y)
        th = np.tanh(y)
        tt = ty * (1 - th * th)
        tm = y * ts + s * ty
        y, ty = s * y + th, tm + tt
    return ty


def floor_fb() -> float:
    a, _ = _inputs(2**16)
    tg = torch.from_numpy(a.copy()).requires_grad_()

    def torch_fb():
        chain(torch, tg).sum().backward()

    t_np, t_t = paired([lambda: numpy_fb(a), torch_fb], 5)
    return t_np / t_t


def floor_jvp() -> float:
    a, v = _inputs(2**16)
    ta, tv = torch.from_numpy(a.copy()), torch.from_numpy(v.copy())

    def torch_jvp():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(chain(torch, tfwAD.make_dual(ta, tv))).tangent

    t_np, t_t = paired([lambda: numpy_jvp(a, v), torch_jvp], 5)
    return t_np / t_t


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

    def jvp_of_grad():
        return func.jvp(func.grad(rosenbrock), (x0,), (v,))[1]

    t_g, t_jg = paired([gradient, jvp_of_grad], 5)
    return t_jg / t_g


def hvp() -> float:
    x0, v, gradient = _rosen()

    def functional_hvp():
        return pf.autograd.functional.hvp(rosenbrock, x0, v)[1]

    t_g, t_h = paired([gradient, functional_hvp], 5)
    return t_h / t_g


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
    # not in the table: what NumPy's kernels allow at all (no Python overhead, same passes)
    ("floorfb", "(floor) forward + backward by hand in NumPy vs torch, n=2^16", 1.0, True, floor_fb),
    ("floorjvp", "(floor) jvp by hand in NumPy vs torch, n=2^16", 1.0, True, floor_jvp),
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
