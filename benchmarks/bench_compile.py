"""pf.compile: paired ratios for the compiler's performance table.

Each figure alternates its two sides in one process (A, B, A, B, ...), each side timed over an
inner loop in CPU time of this process (`time.process_time`: steadier than wall time on a shared
machine), and prints the median ratio. Peak memory by tracemalloc (NumPy reports its buffers).

    PYTHONPATH=src python benchmarks/bench_compile.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
import warnings

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD

try:
    import torch
    import torch.autograd.forward_ad as tfw

    torch.set_num_threads(1)
except ImportError:  # the torch figures are skipped
    torch = None


def per_call(fn, inner: int) -> float:
    t = time.process_time()
    for _ in range(inner):
        fn()
    return (time.process_time() - t) / inner


def paired(a, b, inner: int, reps: int) -> tuple:
    """(median a/b, median a seconds, median b seconds), sides alternating."""
    a(), b()  # warm (the compiled side traces here)
    ra, rb, ratios = [], [], []
    for _ in range(reps):
        ta = per_call(a, inner)
        tb = per_call(b, inner)
        ra.append(ta)
        rb.append(tb)
        ratios.append(ta / tb)
    return statistics.median(ratios), statistics.median(ra), statistics.median(rb)


def chain(y, n_iter: int = 8):
    for _ in range(n_iter):  # 4 ops an iteration: 32 ops
        y = y.sin() * y + y.tanh()
    return y


def chain_np(y, n_iter: int = 8):
    for _ in range(n_iter):
        y = np.sin(y) * y + np.tanh(y)
    return y


def report(name: str, r: tuple, target: str) -> None:
    ratio, ta, tb = r
    print(f"{name:<58} {ratio:7.3f}x   ({ta * 1e6:9.1f} us vs {tb * 1e6:9.1f} us)   target {target}")


def bench_small(inner: int, reps: int) -> None:
    x_np = np.random.default_rng(0).standard_normal(16)
    x, v = pf.tensor(x_np), pf.tensor(np.ones(16))
    cp = pf.compile(chain)
    report(
        "compiled chain n=16 primal / NumPy by hand",
        paired(lambda: cp(x), lambda: chain_np(x_np), inner, reps),
        "<= 1.3",
    )
    cj = pf.compile(lambda x, v: pf.func.jvp(chain, (x,), (v,)))
    cg = pf.compile(pf.func.grad(lambda y: chain(y).sum()))
    if torch is not None:
        tx, tv = torch.tensor(x_np), torch.ones(16, dtype=torch.float64)

        def torch_jvp():
            with tfw.dual_level():
                return tfw.unpack_dual(chain(tfw.make_dual(tx, tv))).tangent

        def torch_grad():
            xr = tx.detach().requires_grad_()
            return torch.autograd.grad(chain(xr).sum(), xr)[0]

        report(
            "compiled jvp chain n=16 / torch forward AD", paired(lambda: cj(x, v), torch_jvp, inner, reps), "<= 0.35"
        )
        report(
            "compile(grad) chain n=16 / torch forward+backward",
            paired(lambda: cg(x), torch_grad, inner, reps),
            "<= 0.3",
        )

        def eager_jvp():
            with fwAD.dual_level():
                return fwAD.unpack_dual(chain(fwAD.make_dual(x, v))).tangent

        report("  (eager pushforward jvp n=16 / torch forward AD)", paired(eager_jvp, torch_jvp, inner, reps), "-")
    a, b, c = pf.ones(3), pf.ones(3), pf.ones(3)
    g = pf.compile(lambda a, b, c: a)
    g(a, b, c)
    (entry,) = g._cache.values()
    prog = entry.fn
    da, db, dc = a._data, b._data, c._data
    t_call = statistics.median(per_call(lambda: g(a, b, c), inner * 20) for _ in range(reps))
    t_prog = statistics.median(per_call(lambda: prog(da, db, dc), inner * 20) for _ in range(reps))
    print(f"{'guard check + dispatch, 3 tensor arguments':<58} {(t_call - t_prog) * 1e6:7.2f} us  target <= 5 us")


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def bench_rosenbrock(inner: int, reps: int) -> None:
    n = 100_000
    x = pf.tensor(np.random.default_rng(1).uniform(-1, 1, n))
    v = pf.tensor(np.random.default_rng(2).uniform(-1, 1, n))
    hvp = pf.compile(lambda x, v: pf.autograd.functional.hvp(rosenbrock, x, v)[1])
    grad = pf.compile(pf.func.grad(rosenbrock))
    report(
        "compiled hvp / compiled gradient, Rosenbrock n=1e5",
        paired(lambda: hvp(x, v), lambda: grad(x), inner, reps),
        "<= 1.5",
    )


def peak(fn) -> int:
    fn()
    tracemalloc.start()
    fn()
    p = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return p


def bench_large(inner: int, reps: int) -> None:
    n = 2**16
    x, v = pf.tensor(np.random.default_rng(3).standard_normal(n)), pf.ones(n)

    def eager_jvp():
        with fwAD.dual_level():
            return fwAD.unpack_dual(chain(fwAD.make_dual(x, v))).tangent

    cj = pf.compile(lambda x, v: pf.func.jvp(chain, (x,), (v,))[1])
    eg = pf.func.grad(lambda y: chain(y).sum())
    cg = pf.compile(eg)
    report("compiled / eager jvp, n=2^16", paired(lambda: cj(x, v), eager_jvp, inner, reps), "<= 1.0")
    report("compiled / eager forward+backward, n=2^16", paired(lambda: cg(x), lambda: eg(x), inner, reps), "<= 1.0")
    for name, c, a, b in (
        ("jvp", cj, lambda: cj(x, v), eager_jvp),
        ("forward+backward", cg, lambda: cg(x), lambda: eg(x)),
    ):
        pa, pb = peak(a) + scratch_bytes(c), peak(b)
        print(
            f"  peak memory {name} (compiled: with the scratch arrays it keeps between calls): "
            f"compiled {pa / 2**20:.2f} MiB, eager {pb / 2**20:.2f} MiB ({pa / pb:.2f}x)"
        )


def scratch_bytes(compiled) -> int:
    """Bytes of the scratch arrays the compiled function's programs keep (this thread's)."""
    held = 0
    for e in compiled._cache.values():
        s = getattr(e, "program", None) and e.program.namespace.get("scratch")
        held += sum(a.nbytes for a in s.arrays) if s else 0
    return held


def bench_ode() -> None:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples"))
    import compiled_ode

    res = compiled_ode.main(verbose=False)
    print(f"{'ODE example (Brusselator BDF): compiled / eager solve':<58} {res['ratio']:7.3f}x   target <= 0.3")


def bench_loops(sizes: tuple) -> None:
    """Loop kernels (pushforward.bench.loops): the first compiled call of each jvp (trace, check,
    emit) at growing sizes, whose time grows with the trace, and the compiled jvp against NumPy's
    primal loop, each call timed on its own (one trace of thousands of statements per call)."""
    from pushforward.bench import loops

    for name in ("elements", "lu", "stencil", "recurrence"):
        kernel, make = loops._KERNELS[name]
        for n in sizes:
            x, v, *rest = make(n)
            f = pf.compile(lambda x, v, *r, k=kernel: pf.func.jvp(lambda y: k(pf, y, *r), (x,), (v,))[1])
            args = [pf.tensor(a) for a in (x, v, *rest)]
            t = time.perf_counter()
            f(*args)
            first = time.perf_counter() - t
            (entry,) = f._cache.values()
            lines = entry.program.source.count("\n")
            primal = min(per_call(lambda: kernel(np, x, *rest), 1) for _ in range(5))
            comp = min(per_call(lambda: f(*args), 1) for _ in range(5))
            print(
                f"loop-{name:<10} n={n:<3} first compiled call {first:6.2f} s ({lines:6d} statements); compiled jvp / "
                f"NumPy primal {comp / primal:6.2f}x   target <= 5"
            )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    a = ap.parse_args(argv)
    reps = 3 if a.quick else 7
    warnings.simplefilter("error", RuntimeWarning)  # a silent eager fallback would void the figures
    bench_small(200 if a.quick else 1000, reps)
    bench_rosenbrock(3 if a.quick else 10, reps)
    bench_large(5 if a.quick else 20, reps)
    bench_ode()
    bench_loops((10, 20) if a.quick else (10, 20, 30, 40))


if __name__ == "__main__":
    main()
