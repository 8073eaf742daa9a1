"""What NumPy's dispatch costs on a tensor: `np.add(t, t)` against `t + t`, `np.sin(t)` against
`t.sin()`, `np.sum(t)` against `t.sum()` and a few more, paired in one process.

Each row times the NumPy-style call and the method call it lands on, alternated within every
round, and prints the median over rounds of the per-round ratio. The `floor` column is the least
ratio any Python `__array_ufunc__` / `__array_function__` can reach: NumPy's override machinery on
an object whose protocol method does nothing, run next to the method call, over the method call
alone (NumPy's argument parsing, the override lookup, the tuple and dict it builds, the protocol
method's own Python frame). The `numpy` column is the same with a protocol method written in C
(`"".format`, which takes any arguments and returns at once): NumPy's own part, which no Python
code can go below. What lies between `floor` and `ratio` is ours.

Timed with the thread's CPU clock (time.thread_time), so that time spent descheduled on a shared
machine is not counted. Run one core, one BLAS thread:

    OPENBLAS_NUM_THREADS=1 taskset -c 0 python benchmarks/bench_numpy_dispatch.py [--n 20] [--rounds 41]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import timeit

import numpy as np

import pushforward as pf


class _Nothing:
    """NumPy's protocols, doing nothing: what NumPy's dispatch costs by itself."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return None

    def __array_function__(self, func, types, args, kwargs):
        return None


class _NothingInC:
    """NumPy's protocols as a C callable doing nothing: NumPy's own part of the dispatch."""

    __array_ufunc__ = __array_function__ = "".format


# name: (NumPy-style call, the method call it lands on, the do-nothing override of the same call)
ROWS = {
    "np.add(t, t) / t + t": ("np.add(t, t)", "t + t", "np.add(d, d)"),
    "np.multiply(t, 2.0) / t * 2.0": ("np.multiply(t, 2.0)", "t * 2.0", "np.multiply(d, 2.0)"),
    "np.sin(t) / t.sin()": ("np.sin(t)", "t.sin()", "np.sin(d)"),
    "np.matmul(t, t) / t @ t": ("np.matmul(t, t)", "t @ t", "np.matmul(d, d)"),
    "np.sum(t) / t.sum()": ("np.sum(t)", "t.sum()", "np.sum(d)"),
    "np.sum(t, 0) / t.sum(0)": ("np.sum(t, 0)", "t.sum(0)", "np.sum(d, 0)"),
    "np.dot(t, t) / t @ t": ("np.dot(t, t)", "t @ t", "np.dot(d, d)"),
    "np.where(m, t, t) / pf.where(m, t, t)": ("np.where(m, t, t)", "pf.where(m, t, t)", "np.where(d, d, d)"),
    "np.concatenate([t, t]) / pf.cat([t, t])": ("np.concatenate([t, t])", "pf.cat([t, t])", "np.concatenate([d, d])"),
}


def measure(n: int = 20, rounds: int = 41, number: int = 2000) -> dict:
    """Per row: median ratios NumPy-style / method, floor / method and NumPy's part / method, and
    the method's time in us."""
    rng = np.random.default_rng(0)
    scope = {"np": np, "pf": pf, "t": pf.tensor(rng.random((n, n))), "d": _Nothing(), "c": _NothingInC()}
    scope["m"] = scope["t"] > 0.5

    def timer(stmt: str) -> timeit.Timer:
        return timeit.Timer(stmt, globals=scope, timer=time.thread_time)

    results = {}
    for name, (call, method, nothing) in ROWS.items():
        in_c = re.sub(r"\bd\b", "c", nothing)
        timers = [timer(call), timer(method), timer(f"{nothing}; {method}"), timer(f"{in_c}; {method}")]
        ratios, floors, numpys, base = [], [], [], []
        for _ in range(rounds):
            ours, theirs, floor, numpy_part = (tm.timeit(number) / number for tm in timers)
            ratios.append(ours / theirs)
            floors.append(floor / theirs)
            numpys.append(numpy_part / theirs)
            base.append(theirs)
        med = statistics.median
        results[name] = (med(ratios), med(floors), med(numpys), med(base) * 1e6)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="the tensors are n x n float64 (default 20)")
    parser.add_argument("--rounds", type=int, default=41)
    opts = parser.parse_args()
    print(f"{opts.n}x{opts.n} float64, median of {opts.rounds} paired rounds (thread CPU time)")
    print(f"{'NumPy-style / method':42s} {'ratio':>7s} {'floor':>7s} {'numpy':>7s} {'method us':>10s}")
    for name, (ratio, floor, numpy_part, base) in measure(opts.n, opts.rounds).items():
        print(f"{name:42s} {ratio:7.3f} {floor:7.3f} {numpy_part:7.3f} {base:10.2f}")


if __name__ == "__main__":
    main()
