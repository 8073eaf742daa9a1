"""Run workloads over sizes and libraries: every library in one process, timed in alternation.

For each (workload, size) cell, each library's version is built and run once (a warm-up: tracing,
jit compilation and caches happen here), its result is checked against the baseline library's
(a version that computes something else is reported, never timed), and the versions that agree
are timed together by `timing.paired`. A library or feature that is missing is a note, and so are a
version that fails and the first warning a version gives. Ctrl-C stops the run and keeps every cell measured so far.

>>> from pushforward.bench.runner import run, QUICK
>>> from pushforward.bench import select_workloads
>>> res = run(select_workloads("chain-primal"), [16], ["numpy", "pushforward"], settings=QUICK)
>>> cell = res.cells[0]
>>> cell.baseline, sorted(cell.ratios), cell.ratios["numpy"]
('numpy', ['numpy', 'pushforward'], 1.0)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .libraries import LIBRARIES, NotApplicable, Unavailable, to_numpy, unavailable
from .timing import TIMERS, calls_per_batch, paired
from .workload import Workload

__all__ = ["Settings", "QUICK", "FULL", "Cell", "Results", "cells", "run", "measure", "disagreement"]


@dataclass(frozen=True)
class Settings:
    """How long to time: `rounds` alternations, each batch of calls lasting about `min_time` seconds."""

    rounds: int = 5
    min_time: float = 0.02
    timer: str = "cpu"


FULL = Settings()
QUICK = Settings(rounds=3, min_time=0.002)


@dataclass
class Cell:
    """One workload at one size: best time per call and median paired ratio to `baseline`, per library."""

    workload: str
    size: int
    baseline: str | None
    times: dict[str, float] = field(default_factory=dict)
    ratios: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # library -> why it has no figure here


@dataclass
class Results:
    """Everything a run measured (`interrupted`: stopped by Ctrl-C after `len(cells)` of `planned` cells)."""

    workloads: list[Workload]
    libraries: list[str]
    settings: Settings
    cells: list[Cell] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # library -> why it did not run at all
    planned: int = 0
    interrupted: bool = False


def disagreement(got: list, want: list, rtol: float = 1e-6) -> str | None:
    """How two results (lists from `to_numpy`) differ, or None when they agree to `rtol`."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {i} has shape {tuple(g.shape)}, expected {tuple(w.shape)}"
        diff = abs(g - w).max() if g.size else 0.0
        scale = abs(w).max() if w.size else 0.0
        if diff > rtol * max(float(scale), 1.0):
            return f"output {i} differs by {float(diff):.3g} (largest value {float(scale):.3g})"
    return None


def _build(workload: Workload, lib: str, n: int) -> tuple[Callable[[], Any] | None, list | str, str | None]:
    """(the version of no arguments, its warm-up result, the first warning it gave) or (None, why not, None)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # say it in the report (say, a compiled function that runs eagerly)
            for quiet in (DeprecationWarning, PendingDeprecationWarning):  # a library's notes to its developers
                warnings.simplefilter("ignore", quiet)
            fn = workload.build(lib, n)
            out = to_numpy(fn())
        said = str(caught[0].message).splitlines()[0][:200] if caught else None
        return fn, out, said
    except (Unavailable, NotApplicable) as e:
        return None, str(e), None
    except Exception as e:  # a version that fails is reported in its cell; the others still run
        msg = str(e).splitlines()[0] if str(e) else ""
        return None, f"failed: {type(e).__name__}: {msg[:160]}", None


def measure(workload: Workload, n: int, libraries: Sequence[str], baseline: str, settings: Settings) -> Cell:
    """Build, check and time every library's version of `workload` at size n."""
    fns: dict[str, Callable[[], Any]] = {}
    outputs: dict[str, list] = {}
    cell = Cell(workload.name, n, None)
    for lib in libraries:
        fn, out, said = _build(workload, lib, n)
        if fn is None:
            cell.notes[lib] = out
        else:
            fns[lib], outputs[lib] = fn, out
            if said:
                cell.notes[lib] = f"warning: {said}"
    ref = baseline if baseline in fns else next(iter(fns), None)
    for lib in [lib for lib in fns if lib != ref]:
        why = disagreement(outputs[lib], outputs[ref])
        if why:
            cell.notes[lib] = f"WRONG RESULT (not timed): {why} from {ref}'s"
            del fns[lib]
    if len(fns) < 2:
        return cell  # nothing to compare with
    timer = TIMERS[settings.timer]
    order = [ref] + [lib for lib in fns if lib != ref]
    numbers = [calls_per_batch(fns[lib], settings.min_time, timer) for lib in order]
    times, ratios = paired([fns[lib] for lib in order], numbers, settings.rounds, timer)
    cell.baseline = ref
    cell.times, cell.ratios = dict(zip(order, times)), dict(zip(order, ratios))
    return cell


def cells(workloads: Sequence[Workload], sizes: Sequence[int]) -> list[tuple[Workload, int]]:
    """The (workload, size) cells a run measures, in order: each workload at the sizes in its range."""
    return [(w, n) for w in workloads for n in sorted(set(sizes)) if w.fits(n)]


def run(
    workloads: Sequence[Workload],
    sizes: Sequence[int],
    libraries: Sequence[str] = tuple(LIBRARIES),
    *,
    baseline: str = "numpy",
    settings: Settings = FULL,
    progress: Callable[[int, int, str], None] | None = None,
) -> Results:
    """Measure every workload at every size in its range; `progress(done, total, label)` before each cell."""
    res = Results(list(workloads), list(libraries), settings)
    res.notes = {lib: why for lib in libraries if (why := unavailable(lib))}
    libs = [lib for lib in libraries if lib not in res.notes]
    plan = cells(workloads, sizes)
    res.planned = len(plan)
    try:
        for i, (w, n) in enumerate(plan):
            if progress is not None:
                progress(i, len(plan), f"{w.name} n={n}")
            with np.errstate(all="ignore"):
                res.cells.append(measure(w, n, libs, baseline, settings))
    except KeyboardInterrupt:
        res.interrupted = True
    if progress is not None:
        progress(len(res.cells), len(plan), "")
    return res
