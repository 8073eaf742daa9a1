"""`pushforward bench`: the workloads people compare autodiff libraries on, timed on this machine.

Workloads (`WORKLOADS`): the 32-op element-wise chain (primal, jvp, gradient, hvp), an MLP (jvp,
gradient, per-example gradients), `jacfwd`/`jacrev` of a dense map, a sparse Jacobian, a jet and
the jvps of loop kernels (a stencil, a row-loop factorisation, a recurrence, an element loop),
each written for pushforward (eager and `pf.compile`), by hand in NumPy, and in PyTorch and JAX
(when installed). `runner.run` times the libraries in alternation in one process and reports
paired ratios; `report.tables` lays them out; `plot.plot_results` draws time against size.

>>> from pushforward.bench import select_workloads
>>> [w.name for w in select_workloads("chain")]
['chain-primal', 'chain-jvp', 'chain-grad', 'chain-hvp']
"""

from __future__ import annotations

import difflib

from . import chain, indexing, jacobians, jet, loops, mlp
from .libraries import LIBRARIES, Unavailable
from .runner import FULL, QUICK, Cell, Results, Settings, run
from .workload import Workload

__all__ = [
    "WORKLOADS",
    "LIBRARIES",
    "SIZES",
    "QUICK_SIZES",
    "select_workloads",
    "select_libraries",
    "parse_sizes",
    "run",
    "Settings",
    "FULL",
    "QUICK",
    "Cell",
    "Results",
    "Workload",
    "Unavailable",
]

WORKLOADS: list[Workload] = [
    *chain.WORKLOADS,
    *mlp.WORKLOADS,
    *jacobians.WORKLOADS,
    *jet.WORKLOADS,
    *indexing.WORKLOADS,
    *loops.WORKLOADS,
]
SIZES = (16, 256, 4096, 2**16, 2**20)
QUICK_SIZES = (16, 4096)


def _choose(spec: str | None, names: list[str], what: str, prefixes: bool) -> list[str]:
    if not spec:
        return list(names)
    chosen: list[str] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        hits = [n for n in names if n == item or (prefixes and n.startswith(item + "-"))]
        if not hits:
            families = sorted({n.split("-")[0] for n in names} - set(names)) if prefixes else []
            near = difflib.get_close_matches(item, names + families, n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else f" (choose from {', '.join(names)})"
            raise ValueError(f"unknown {what} '{item}'{hint}")
        chosen += [h for h in hits if h not in chosen]
    if not chosen:
        raise ValueError(f"no {what} named in {spec!r}")
    return chosen


def select_workloads(spec: str | None = None) -> list[Workload]:
    """The workloads named in a comma-separated list (a prefix such as `chain` or `mlp` names a family).

    >>> [w.name for w in select_workloads("mlp-grad,jet")]
    ['mlp-grad', 'jet']
    """
    by_name = {w.name: w for w in WORKLOADS}
    return [by_name[n] for n in _choose(spec, list(by_name), "workload", prefixes=True)]


def select_libraries(spec: str | None = None) -> list[str]:
    """The libraries named in a comma-separated list (default: all, in `LIBRARIES` order).

    >>> select_libraries("torch,numpy")
    ['torch', 'numpy']
    """
    return _choose(spec, list(LIBRARIES), "library", prefixes=False)


def parse_sizes(spec: str) -> list[int]:
    """Sizes from a comma-separated list of integers or powers of two written `2^k`.

    >>> parse_sizes("16,2^10")
    [16, 1024]
    """
    sizes = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        base, _, exp = item.partition("^")
        try:
            n = int(base) ** int(exp) if exp else int(base)
        except ValueError:
            raise ValueError(f"size '{item}' is not an integer or a power written 2^k") from None
        if n < 1 or n > 2**26:
            raise ValueError(f"size {n} is out of range (1 to 2^26 elements)")
        sizes.append(n)
    if not sizes:
        raise ValueError(f"no size in {spec!r}")
    return sizes
