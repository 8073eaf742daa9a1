"""Per-op cost of indexing on a 20x20 float64 array: pushforward against torch and NumPy, paired.

Rows (each for plain, dual and recorded tensors where the library has that mode): `a + a` (the
reference op), the slice read `a[1:-1, 2]`, the slice write `a[3, 1:-1] = a[2, 1:-1]` and the
element reads `a[3, 4] + a[4, 5]`. One process, one core (OPENBLAS_NUM_THREADS=1,
torch.set_num_threads(1)), the libraries alternated within every round (bench.timing.paired):
it prints each one's time per call and the ratios pushforward/torch and pushforward/NumPy.

Dual: inside a dual level, `a` made dual (torch: torch.autograd.forward_ad). Recorded: `a` a
non-leaf that requires grad (a leaf's clone); writes go into it, so its history grows by one node
per write, as in a loop program (it is made afresh every `_FRESH` calls, alike in both libraries).

Run: python benchmarks/bench_indexing.py [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pushforward as pf  # noqa: E402
import pushforward.autograd.forward_ad as fwAD  # noqa: E402
from pushforward.bench.libraries import Unavailable, import_torch  # noqa: E402
from pushforward.bench.timing import TIMERS, calls_per_batch, paired  # noqa: E402

try:
    torch = import_torch()
    import torch.autograd.forward_ad as tfwAD

    torch.set_num_threads(1)
except Unavailable:
    torch = None

N = 20
_FRESH = 100  # recorded writes into one tensor before it is made afresh


def _add(a):
    return a + a


def _read(a):
    return a[1:-1, 2]


def _write(a):
    a[3, 1:-1] = a[2, 1:-1]


def _elements(a):
    return a[3, 4] + a[4, 5]


ROWS = {"a + a": _add, "a[1:-1, 2]": _read, "a[3, 1:-1] = a[2, 1:-1]": _write, "a[3, 4] + a[4, 5]": _elements}


def _refreshing(make, op):
    """op on a tensor from make(), made afresh every _FRESH calls (a recorded write grows its history)."""
    box = [make(), 0]

    def call():
        box[1] += 1
        if box[1] == _FRESH:
            box[0], box[1] = make(), 0
        return op(box[0])

    return call


def _versions(mode: str, op, a: np.ndarray, v: np.ndarray) -> dict:
    """library -> a function of no arguments running op once in `mode` (with its context entered)."""
    out = {}
    if mode == "plain":
        x = pf.tensor(a)
        out["pushforward"] = lambda: op(x)
        out["numpy"] = (lambda b: lambda: op(b))(a.copy())
        if torch is not None:
            tx = torch.from_numpy(a.copy())
            out["torch"] = lambda: op(tx)
    elif mode == "dual":
        x = fwAD.make_dual(pf.tensor(a), pf.tensor(v))
        out["pushforward"] = lambda: op(x)
        if torch is not None:
            tx = tfwAD.make_dual(torch.from_numpy(a.copy()), torch.from_numpy(v.copy()))
            out["torch"] = lambda: op(tx)
    else:
        leaf = pf.tensor(a, requires_grad=True)
        out["pushforward"] = _refreshing(lambda: leaf.clone(), op)
        if torch is not None:
            tleaf = torch.from_numpy(a.copy()).requires_grad_()
            out["torch"] = _refreshing(lambda: tleaf.clone(), op)
    return out


def measure(mode: str, op, rounds: int) -> dict:
    """library -> (best time per call in us, pushforward's median paired ratio to it)."""
    gc.collect()  # (what earlier rows left for the collector is not this row's cost)
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal((N, N)), rng.standard_normal((N, N))
    if mode == "dual":
        with fwAD.dual_level():
            if torch is not None:
                with tfwAD.dual_level():
                    return _timed(_versions(mode, op, a, v), rounds)
            return _timed(_versions(mode, op, a, v), rounds)
    return _timed(_versions(mode, op, a, v), rounds)


def _timed(versions: dict, rounds: int) -> dict:
    names = ["pushforward"] + [k for k in versions if k != "pushforward"]
    fns = [versions[k] for k in names]
    for f in fns:
        f()
    number = max(calls_per_batch(f, 0.02) for f in fns)
    times, ratios = paired(fns, number, rounds=rounds, timer=TIMERS["cpu"])
    # ratios[i] is library i over pushforward: pushforward over library i is its inverse per round,
    # whose median is the inverse of the median
    return {k: (t * 1e6, 1.0 / r) for k, t, r in zip(names, times, ratios)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--modes", default="plain,dual,recorded")
    args = p.parse_args(argv)
    print(f"{'operation':<26}{'mode':<10}{'pushforward':>12}{'torch':>9}{'NumPy':>8}{'pf/torch':>10}{'pf/NumPy':>10}")
    print(f"{'':<26}{'':<10}{'(us)':>12}{'(us)':>9}{'(us)':>8}")
    for name, op in ROWS.items():
        for mode in args.modes.split(","):
            r = measure(mode, op, args.rounds)

            def col(k, fmt, i):
                return format(r[k][i], fmt) if k in r else format("-", ">" + fmt.split(".")[0])

            print(
                f"{name:<26}{mode:<10}{col('pushforward', '12.2f', 0)}{col('torch', '9.2f', 0)}"
                f"{col('numpy', '8.2f', 0)}{col('torch', '10.2f', 1)}{col('numpy', '10.2f', 1)}"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
