"""Where an eager op's time goes: the chain's four ops (sin, mul, tanh, add) at n=16, and indexing
on a 20x20 array (a slice read, a slice write, two element reads and their sum, and a loop kernel's
augmented element writes), per mode.

For each op and mode it prints, measured in one run with the sides alternated (median of rounds,
per call): pushforward's time, the same NumPy passes written by hand (what no Python library can go
below), torch's time (with the test extras), and the Python calls pushforward makes (sys.setprofile).
The difference between the first two columns is the Python work of dispatch, tape and tangent;
bench_chain.py gives the whole chain's ratios.

Run: python benchmarks/profile_eager.py
"""

from __future__ import annotations

import contextlib
import sys
import timeit

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.bench.chain import DEPTH, chain, chain_sum
from pushforward.bench.libraries import Unavailable, import_torch
from pushforward.bench.timing import python_calls

try:
    torch = import_torch()
    import torch.autograd.forward_ad as tfwAD
except Unavailable:
    torch = None

N = 16
OPS = {  # op: (pushforward/torch call, NumPy primal, NumPy primal + tangent passes)
    "sin": (lambda x: x.sin(), lambda a, v: np.sin(a), lambda a, v: (np.sin(a), v * np.cos(a))),
    "mul": (lambda x: x * x, lambda a, v: a * a, lambda a, v: (a * a, a * v + a * v)),
    "tanh": (lambda x: x.tanh(), lambda a, v: np.tanh(a), lambda a, v: (np.tanh(a), v * (1 - a * a))),
    "add": (lambda x: x + x, lambda a, v: a + a, lambda a, v: (a + a, v + v)),
}


def per_call(fns: list, number: int = 20000, rounds: int = 7) -> list:
    """Median time per call (ns) of each function, the functions alternated within every round."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for k, f in enumerate(fns):
            times[k].append(timeit.timeit(f, number=number) / number * 1e9)
    return [float(np.median(t)) for t in times]


def calls(fn) -> int:
    """The Python functions fn() enters (its two lambdas not counted)."""
    return len(python_calls(fn)) - 2


def _inputs():
    rng = np.random.default_rng(0)
    return rng.random(N), rng.random(N)


def modes():
    """Per mode: (name, pushforward input maker (a context), torch input maker, NumPy function index)."""
    a, v = _inputs()
    plain = pf.tensor(a)
    recorded = pf.tensor(a, requires_grad=True).sin()  # (a non-leaf: what a chain's ops see)
    rows = [("no grad", lambda: plain, lambda: torch.from_numpy(a.copy()), 1)]
    rows.append(("recorded", lambda: recorded, lambda: torch.from_numpy(a.copy()).requires_grad_().sin(), 1))
    rows.append(("jvp", None, None, 2))
    return a, v, rows


def main() -> None:
    a, v, rows = modes()
    head = f"{'op':<6}{'mode':<10}{'pushforward':>12}{'NumPy passes':>14}{'torch':>9}{'calls':>7}"
    print(head + "   (ns per call, n=16)")
    for name, (call, np_primal, np_jvp) in OPS.items():
        for mode, make, tmake, k in rows:
            np_fn = np_primal if k == 1 else np_jvp
            if mode == "jvp":
                with fwAD.dual_level():
                    x = fwAD.make_dual(pf.tensor(a), pf.tensor(v)).sin()
                    fns = [lambda: call(x), lambda: np_fn(a, v)]
                    if torch is not None:
                        with tfwAD.dual_level():
                            tx = tfwAD.make_dual(torch.from_numpy(a.copy()), torch.from_numpy(v.copy())).sin()
                            t = per_call(fns + [lambda: call(tx)])
                    else:
                        t = per_call(fns)
                    n_calls = calls(lambda: call(x))
            else:
                x = make()
                fns = [lambda: call(x), lambda: np_fn(a, v)]
                t = per_call(fns + ([lambda: call(tx)] if torch is not None and (tx := tmake()) is not None else []))
                n_calls = calls(lambda: call(x))
            tt = f"{t[2]:9.0f}" if len(t) > 2 else f"{'-':>9}"
            print(f"{name:<6}{mode:<10}{t[0]:12.0f}{t[1]:14.0f}{tt}{n_calls:7d}")
    indexing()
    backward_per_node(a)
    sys.stdout.flush()


def _add_element(a) -> None:
    a[3, 4] += a[3, 3]


def _divide_element(a) -> None:
    a[3, 4] /= 9.0


INDEXING = {  # name: the statement on an array or tensor a (any library)
    "a[1:-1, 2]": lambda a: a[1:-1, 2],
    "a[3, 1:-1] = a[2, 1:-1]": lambda a: a.__setitem__((3, slice(1, -1)), a[2, 1:-1]),
    "a[3, 4] + a[4, 5]": lambda a: a[3, 4] + a[4, 5],
    # a loop kernel's element statements (a stencil sweep's): getitem, the in-place op, setitem
    "a[3, 4] += a[3, 3]": _add_element,
    "a[3, 4] /= 9.0": _divide_element,
}


def indexing() -> None:
    """The indexing statements per mode: pushforward, NumPy and torch (ns per call) and the Python
    calls pushforward makes (benchmarks/bench_indexing.py gives the paired ratios)."""
    rng = np.random.default_rng(0)
    a, v = rng.random((20, 20)), rng.random((20, 20))
    print(f"{'indexing (20x20)':<26}{'mode':<10}{'pushforward':>12}{'NumPy':>9}{'torch':>9}{'calls':>7}")
    for name, op in INDEXING.items():
        for mode in ("no grad", "recorded", "jvp"):
            with fwAD.dual_level() if mode == "jvp" else contextlib.nullcontext():
                if mode == "no grad":
                    x, tx = pf.tensor(a), None if torch is None else torch.from_numpy(a.copy())
                elif mode == "recorded":  # (a non-leaf; each write adds a node to its history)
                    x = pf.tensor(a, requires_grad=True).clone()
                    tx = None if torch is None else torch.from_numpy(a.copy()).requires_grad_().clone()
                else:
                    x = fwAD.make_dual(pf.tensor(a), pf.tensor(v))
                    tx = None
                fns = [lambda: op(x), lambda: op(a)]
                if torch is not None and mode == "jvp":
                    with tfwAD.dual_level():
                        tx = tfwAD.make_dual(torch.from_numpy(a.copy()), torch.from_numpy(v.copy()))
                        t = per_call(fns + [lambda: op(tx)], number=5000)
                else:
                    t = per_call(fns + ([lambda: op(tx)] if tx is not None else []), number=5000)
                n_calls = calls(lambda: op(x))
            tt = f"{t[2]:9.0f}" if len(t) > 2 else f"{'-':>9}"
            print(f"{name:<26}{mode:<10}{t[0]:12.0f}{t[1]:9.0f}{tt}{n_calls:7d}")


def backward_per_node(a: np.ndarray) -> None:
    """The chain's backward pass (its graph kept: retain_graph) per tape node, against torch's."""
    y = chain_sum(pf.tensor(a, requires_grad=True))
    nodes = 4 * DEPTH + 1  # (the chain's ops and the sum)
    fns = [lambda: y.backward(retain_graph=True)]
    if torch is not None:
        ty = chain(torch, torch.from_numpy(a.copy()).requires_grad_()).sum()
        fns.append(lambda: ty.backward(retain_graph=True))
    t = per_call(fns, number=300)
    tt = f", torch {t[1] / nodes:.0f}" if len(t) > 1 else ""
    print(f"backward of the chain, per node (ns): pushforward {t[0] / nodes:.0f}{tt}")


if __name__ == "__main__":
    main()
