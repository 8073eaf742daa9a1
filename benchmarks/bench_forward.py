"""Forward mode against the primal: jvp time over primal time, and peak memory, measured in one run.

- 32-op chain (y = sin(y) * y + tanh(y), eight times): jvp time / primal time, n = 2**20 and 16;
- 3-layer tanh MLP (128-256-256-10, batch 64): jvp w.r.t. the input / primal;
- peak memory of a forward chain with nothing requiring grad at depth 100 and 10,000.
Run: python benchmarks/bench_forward.py
"""

from __future__ import annotations

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.bench import chain as bench_chain
from pushforward.bench.timing import TIMERS, paired


def best(fn, number: int, repeat: int = 7) -> float:
    """Best wall time per call (`pushforward.bench.timing.paired` with one function)."""
    return paired([fn], number, repeat, TIMERS["wall"])[0][0]


def chain(y):
    return bench_chain.chain(pf, y)


def jvp_of(f, x, v):
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(x, v))).tangent


def chain_ratio(n: int, number: int) -> float:
    x = pf.tensor(np.random.default_rng(0).random(n))
    v = pf.ones_like(x)
    return best(lambda: jvp_of(chain, x, v), number) / best(lambda: chain(x), number)


def mlp_ratio() -> float:
    rng = np.random.default_rng(0)
    w = [pf.tensor(rng.standard_normal(s) / np.sqrt(s[0])) for s in ((128, 256), (256, 256), (256, 10))]
    b = [pf.tensor(rng.standard_normal(s[1]) * 0.1) for s in ((128, 256), (256, 256), (256, 10))]
    x = pf.tensor(rng.standard_normal((64, 128)))
    v = pf.tensor(rng.standard_normal((64, 128)))

    def mlp(h):
        h = pf.tanh(h @ w[0] + b[0])
        h = pf.tanh(h @ w[1] + b[1])
        return h @ w[2] + b[2]

    return best(lambda: jvp_of(mlp, x, v), 200) / best(lambda: mlp(x), 200)


def peak_memory(depth: int, n: int = 10_000) -> int:
    x = pf.tensor(np.random.default_rng(0).random(n))

    def run():
        y = x
        for _ in range(depth):
            y = pf.sin(y)

    return pf.memory.peak_bytes(run, warmup=False)


def peak_memory_dual(depth: int, n: int = 10_000) -> int:
    x = pf.tensor(np.random.default_rng(0).random(n))

    def run():
        with fwAD.dual_level():
            y = fwAD.make_dual(x, pf.ones_like(x))
            for _ in range(depth):
                y = pf.sin(y)

    return pf.memory.peak_bytes(run, warmup=False)


def main() -> None:
    print(f"chain n=2**20: jvp {chain_ratio(2**20, 3):.2f}x the primal (target <= 2.2x)")
    print(f"chain n=16:    jvp {chain_ratio(16, 2000):.2f}x the primal (target <= 4x)")
    print(f"MLP 128-256-256-10, batch 64: jvp {mlp_ratio():.2f}x the primal (target <= 2.6x)")
    for depth in (100, 10_000):
        print(
            f"peak memory, depth {depth:>6}: no grad {peak_memory(depth) / 1e6:.2f} MB, "
            f"dual {peak_memory_dual(depth) / 1e6:.2f} MB (n = 10,000 float64 = 0.08 MB per array)"
        )


if __name__ == "__main__":
    main()
