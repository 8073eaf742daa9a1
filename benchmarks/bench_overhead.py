"""Per-op overhead: a 32-op chain (y = sin(y) * y + tanh(y), eight times) vs NumPy, in one run.

Prints ratios (pushforward time / NumPy time) for: no grad; requires_grad (forward
with the tape recorded, and forward + backward). Forward-mode figures: bench_forward.py.
Run: python benchmarks/bench_overhead.py
"""

from __future__ import annotations

import sys

import numpy as np

import pushforward as pf
from pushforward.bench.chain import chain
from pushforward.bench.timing import TIMERS, paired


def run(n: int, number: int) -> dict:
    """Best time per call of the chain in NumPy and in pushforward (plain, recorded, forward + backward)."""
    a = np.random.default_rng(0).random(n)
    x = pf.tensor(a)
    xg = pf.tensor(a, requires_grad=True)

    def fwd_bwd():
        chain(pf, xg).sum().backward()

    fns = [lambda: chain(np, a), lambda: chain(pf, x), lambda: chain(pf, xg), fwd_bwd]
    times, _ = paired(fns, [number, number, number, max(1, number // 2)], rounds=7, timer=TIMERS["wall"])
    return dict(zip(("numpy", "plain", "tape", "fwd+bwd"), times))


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
