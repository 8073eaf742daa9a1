"""Where a compiled program's time goes: each line of its generated source, timed.

The program `pf.compile` emitted for one signature is re-run with a clock read between its
statements (one statement per line), many times; the script prints each line's median share.
Timing adds about 0.1 us per line, so use it on programs of large arrays (the Rosenbrock
gradient and Hessian-vector product below), where each line is a full pass over memory.

    python benchmarks/profile_compiled.py [--n 100000] [--repeat 50]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pushforward as pf


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _timed_source(source: str) -> tuple:
    """source with `_t.append(_clock())` before each body line and before the return; its lines."""
    head, *body = source.rstrip().splitlines()
    out, lines = [head, "    _t.append(_clock())"], []
    for line in body:
        if line.strip().startswith("del "):
            out.append(line)
            continue
        out.append(line)
        if not line.strip().startswith("return"):
            out.append("    _t.append(_clock())")
            lines.append(line.strip())
    return "\n".join(out), lines


def profile(compiled, *args, repeat: int = 50) -> list:
    """[(median seconds, line)] of the program compiled for args' signature, in program order."""
    compiled(*args)
    (entry,) = compiled._cache.values()
    src, lines = _timed_source(entry.program.source)
    ns = dict(entry.program.namespace)
    stamps: list = []
    ns.update(_t=stamps, _clock=time.perf_counter)
    exec(compile(src, "<profiled>", "exec"), ns)
    fn = ns[src.split("(", 1)[0].split()[-1]]
    arrays = [a._data if isinstance(a, pf.Tensor) else a for a in args]
    per_line: list = [[] for _ in lines]
    for _ in range(repeat):
        stamps.clear()
        fn(*arrays)
        for k in range(len(lines)):
            per_line[k].append(stamps[k + 1] - stamps[k])
    return [(statistics.median(t), line) for t, line in zip(per_line, lines)]


def report(title: str, rows: list) -> float:
    total = sum(t for t, _ in rows)
    print(f"\n{title}: {total * 1e6:.0f} us over {len(rows)} statements")
    for t, line in rows:
        print(f"  {t * 1e6:8.1f} us {100 * t / total:5.1f}%  {line}")
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=50)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    x, v = pf.tensor(rng.uniform(-1, 1, a.n)), pf.tensor(rng.uniform(-1, 1, a.n))
    grad = pf.compile(pf.func.grad(rosenbrock))
    hvp = pf.compile(lambda x, v: pf.autograd.functional.hvp(rosenbrock, x, v)[1])
    g = report("compiled gradient of Rosenbrock", profile(grad, x, repeat=a.repeat))
    h = report("compiled functional.hvp of Rosenbrock", profile(hvp, x, v, repeat=a.repeat))
    print(f"\nsum of line medians, hvp / gradient: {h / g:.2f}x")


if __name__ == "__main__":
    main()
