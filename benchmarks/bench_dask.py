"""Lazy tensors against hand-written dask.array: time, peak memory and graph size.

The jvp and the gradient of a 10-op element-wise chain and a sum over n float64 (default 2**30,
8 GiB, in chunks of 2**24), by pushforward on Dask-backed tensors and by the same derivative
written out by hand in dask.array. Each variant runs in a process of its own (peak RSS is per
process) on Dask's threaded scheduler. Targets: peak RSS <= 2 GiB, time <= 1.3x and tasks
<= 1.5x the hand-written version's.

    python benchmarks/bench_dask.py                  # n = 2**30 (minutes on two cores)
    python benchmarks/bench_dask.py --n 268435456    # 2**28
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import dask
import dask.array as da
import numpy as np

import pushforward as pf


def values(x):
    """The first nine ops of the chain and their results (pushforward tensors or Dask arrays)."""
    a = np.sin(x)
    b = a * x
    c = b + 1.0
    d = np.tanh(c)
    e = d * d
    f = np.exp(e)
    g = f * 0.5
    h = np.log1p(g)
    i = h * x
    return a, d, f, g, h, i


def chain(x):
    """Ten element-wise ops."""
    return np.cos(values(x)[-1])


def hand_jvp(x, v):
    """d(sum chain)(x) . v written out with dask.array (forward: value and tangent side by side)."""
    a, ta = np.sin(x), np.cos(x) * v
    b, tb = a * x, ta * x + a * v
    c, tc = b + 1.0, tb
    d = np.tanh(c)
    td = (1 - d * d) * tc
    e, te = d * d, 2 * d * td
    f = np.exp(e)
    tf = f * te
    g, tg = f * 0.5, tf * 0.5
    h, th = np.log1p(g), tg / (1 + g)
    i, ti = h * x, th * x + h * v
    return (-np.sin(i) * ti).sum()


def hand_grad(x):
    """The gradient of sum(chain(x)) written out with dask.array (reverse: the chain's values, then
    the cotangents back), reduced by a sum so that the 8 GiB gradient is never held."""
    a, d, f, g, h, i = values(x)
    gi = -np.sin(i)
    gh, gx = gi * x, gi * h
    gg = gh / (1 + g)
    gf = gg * 0.5
    ge = gf * f
    gd = ge * 2 * d
    gc = gd * (1 - d * d)
    gb = gc
    ga, gx = gb * x, gx + gb * a
    gx = gx + ga * np.cos(x)
    return gx.sum()


def inputs(n: int, chunk: int):
    i = da.arange(n, chunks=chunk, dtype=np.float64)
    return i * (1.0 / n), da.cos(i * 1e-3)


def build(variant: str, n: int, chunk: int):
    x, v = inputs(n, chunk)
    if variant == "hand-jvp":
        return hand_jvp(x, v)
    if variant == "hand-grad":
        return hand_grad(x)
    xt, vt = pf.as_tensor(x), pf.as_tensor(v)
    if variant == "pf-jvp":
        return pf.func.jvp(lambda t: chain(t).sum(), (xt,), (vt,))[1].to_dask()
    return pf.func.grad(lambda t: chain(t).sum())(xt).sum().to_dask()


def run_one(variant: str, n: int, chunk: int) -> dict:
    t0 = time.perf_counter()
    arr = build(variant, n, chunk)
    built = time.perf_counter() - t0
    tasks = len(arr.__dask_graph__())
    tasks_opt = len(dask.optimize(arr)[0].__dask_graph__())
    t1 = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=2):
        value = float(arr.compute())
    return {
        "variant": variant,
        "value": value,
        "seconds": time.perf_counter() - t1,
        "build_seconds": built,
        "tasks": tasks,
        "tasks_optimized": tasks_opt,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def _best(rs: list) -> dict:
    """The fastest of a variant's runs, with the largest peak RSS of all of them."""
    best = dict(min(rs, key=lambda r: r["seconds"]))
    best["peak_rss_gib"] = max(r["peak_rss_gib"] for r in rs)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2**30)
    p.add_argument("--chunk", type=int, default=2**24)
    p.add_argument("--repeats", type=int, default=1, help="runs of each variant (the fastest is reported)")
    p.add_argument("--variant", help=argparse.SUPPRESS)  # one measurement, in a child process
    a = p.parse_args()
    if a.variant:
        print(json.dumps(run_one(a.variant, a.n, a.chunk)))
        return
    runs: dict = {}
    # pushforward and hand-written alternate (pf, hand, pf, hand, ...) so that load on the machine
    # hits both alike; each run is a process of its own, so its peak RSS is that variant's alone
    for _ in range(a.repeats):
        for variant in ("pf-jvp", "hand-jvp", "pf-grad", "hand-grad"):
            cmd = [sys.executable, __file__, "--n", str(a.n), "--chunk", str(a.chunk), "--variant", variant]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            runs.setdefault(variant, []).append(json.loads(out))
    res = {v: _best(rs) for v, rs in runs.items()}
    print(
        f"n = {a.n} float64 ({a.n * 8 / 2**30:.1f} GiB), chunks of {a.chunk}, threaded scheduler, 2 workers, "
        f"{a.repeats} run(s) per variant (fastest shown; peak RSS: the largest run's)"
    )
    print(f"{'variant':10} {'value':>22} {'time(s)':>9} {'peak RSS(GiB)':>14} {'tasks':>7} {'tasks(opt)':>10}")
    for r in res.values():
        print(
            f"{r['variant']:10} {r['value']:22.15e} {r['seconds']:9.1f} {r['peak_rss_gib']:14.2f} "
            f"{r['tasks']:7d} {r['tasks_optimized']:10d}"
        )
    for mode in ("jvp", "grad"):
        ours, hand = res[f"pf-{mode}"], res[f"hand-{mode}"]
        rel = abs(ours["value"] - hand["value"]) / max(abs(hand["value"]), 1e-300)
        print(
            f"{mode}: time {ours['seconds'] / hand['seconds']:.2f}x, tasks {ours['tasks'] / hand['tasks']:.2f}x "
            f"(optimized {ours['tasks_optimized'] / hand['tasks_optimized']:.2f}x), peak RSS "
            f"{ours['peak_rss_gib']:.2f} GiB, relative difference {rel:.1e}"
        )


if __name__ == "__main__":
    main()
