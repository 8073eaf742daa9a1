"""Per-op overhead: a 32-op chain (y = sin(y) * y + tanh(y), eight times) vs NumPy, in one run.

Prints ratios (pushforward time / NumPy time) for: no grad; requires_grad (forward
with the tape recorded, and forward + backward). Forward-mode figures: bench_forward.py.
Run: python benchmarks/bench_overhead.py
"""

from __future__ import annotations

import sys
import timeit

import numpy as np

import pushforward as pf


def chain_np(y):
    for _ in range(8):
        y = np.sin(y) * y + np.tanh(y)
    return y


def chain(y):
    for _ in range(8):
        y = pf.sin(y) * y + pf.tanh(y)
    return y


def best(fn, number: int, repeat: int = 7) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def run(n: int, number: int) -> dict:
    a = np.random.default_rng(0).random(n)
    x = pf.tensor(a)
    xg = pf.tensor(a, requires_grad=True)
    t_np = best(lambda: chain_np(a), number)
    t_plain = best(lambda: chain(x), number)
    t_tape = best(lambda: chain(xg), number)

    def fwd_bwd():
        chain(xg).sum().backward()

    t_bwd = best(fwd_bwd, max(1, number // 2))
    return {"numpy": t_np, "plain": t_plain, "tape": t_tape, "fwd+bwd": t_bwd}


def main() -> None:
    for n, number in ((16, 2000), (2**20, 3)):
        r = run(n, number)
        print(f"n = {n}: numpy {r['numpy'] * 1e6:.1f} us per chain ({r['numpy'] / 32 * 1e6:.2f} us/op)")
        print(f"  no grad            {r['plain'] / r['numpy']:.2f}x numpy (target <= 3x)")
        print(f"  requires_grad fwd  {r['tape'] / r['numpy']:.2f}x numpy (target <= 8x)")
        print(f"  fwd + backward     {r['fwd+bwd'] / r['numpy']:.2f}x numpy")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
