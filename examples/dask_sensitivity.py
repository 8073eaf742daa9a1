"""Sensitivity of a smoothed objective over a field larger than memory, with Dask-backed tensors.

The field x has n elements (default 2**31 float64: 16 GiB, more than this example needs in RAM)
in chunks of a Dask array that is never held whole. The objective

    J(x) = sum log(1 + s_i^2) + lam * sum (x_{i+1} - x_i)^2,   s = 0.25 x[:-2] + 0.5 x[1:-1] + 0.25 x[2:]

is written with ordinary pushforward ops. `pf.func.jvp` gives dJ/dx . v (forward mode: one
streaming pass, no tape) and `pf.func.grad` the gradient (reverse mode); both are lazy Dask graphs
until `pf.compute`, which evaluates the jvp, <grad, v> (which must equal it) and |grad| in one
pass over the chunks. Peak memory is that of a few chunks per worker thread, not of the field.

    python examples/dask_sensitivity.py             # 2**31 elements (16 GiB), chunks of 2**24
    python examples/dask_sensitivity.py --n 1000000 # small
"""

from __future__ import annotations

import argparse
import resource
import time

import dask
import dask.array as da
import numpy as np

import pushforward as pf

LAM = 0.1


def field(n: int, chunk: int, phase: float = 0.0):
    """A smooth field with some texture, generated chunk by chunk (never materialised)."""
    i = da.arange(n, chunks=chunk, dtype=np.float64)
    return da.sin(i * 1e-6 + phase) + 0.3 * da.cos(i * 7.3e-4 + phase)


def objective(x: pf.Tensor) -> pf.Tensor:
    s = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    return pf.log1p(s * s).sum() + LAM * ((x[1:] - x[:-1]) ** 2).sum()


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # (KiB on Linux)


def main(n: int = 2**31, chunk: int = 2**24, verbose: bool = True) -> dict:
    x = pf.as_tensor(field(n, chunk))
    v = pf.as_tensor(field(n, chunk, phase=1.0))
    t0 = time.perf_counter()
    _, jv = pf.func.jvp(objective, (x,), (v,))  # lazy: nothing computed yet
    g = pf.func.grad(objective)(x)
    built = time.perf_counter() - t0
    jv, gv, gnorm = pf.compute(jv, (g * v).sum(), g.norm())
    total = time.perf_counter() - t0
    res = {
        "n": n,
        "jvp": jv.item(),
        "grad_dot_v": gv.item(),
        "grad_norm": gnorm.item(),
        "seconds": total,
        "graph_seconds": built,
        "peak_rss_gib": peak_rss_gib(),
        "field_gib": n * 8 / 2**30,
    }
    if verbose:
        print(f"field: {n} float64 elements ({res['field_gib']:.2f} GiB) in chunks of {chunk}")
        print(f"dJ/dx . v (jvp)      = {res['jvp']:.12e}")
        print(f"<grad J, v>          = {res['grad_dot_v']:.12e}")
        print(f"|grad J|             = {res['grad_norm']:.12e}")
        print(f"time {total:.1f} s (graphs built in {built:.2f} s), peak RSS {res['peak_rss_gib']:.2f} GiB")
    return res


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2**31, help="field size (default 2**31: 16 GiB of float64)")
    p.add_argument("--chunk", type=int, default=2**24, help="chunk size in elements (default 2**24)")
    p.add_argument("--workers", type=int, default=2, help="threads of Dask's scheduler (default 2)")
    a = p.parse_args()
    with dask.config.set(scheduler="threads", num_workers=a.workers):
        main(a.n, min(a.chunk, a.n))
