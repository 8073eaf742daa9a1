"""Paired timing: several implementations of one computation timed in alternation.

Each round times every implementation once (a batch of `number` calls), in a rotated order, so
that load on the machine, the allocator's state and the CPU's clock hit all of them alike. The
ratio of two implementations is the median over rounds of their per-round ratio (a paired
statistic); the time of each is its best round. CPU time of the process (`time.process_time`)
by default: on a shared machine, time spent waiting for a core is not the code's.

>>> from pushforward.bench.timing import paired
>>> times, ratios = paired([lambda: sum(range(100)), lambda: sum(range(200))], number=50, rounds=3)
>>> len(times), ratios[0]
(2, 1.0)
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Callable, Sequence

__all__ = ["paired", "calls_per_batch", "python_calls", "TIMERS"]

# name -> clock: "cpu" (this process's CPU time, all threads) or "wall"
TIMERS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def calls_per_batch(fn: Callable[[], object], min_time: float, timer: Callable[[], float] = time.perf_counter) -> int:
    """How many calls of `fn` make a batch lasting about `min_time` seconds (at least 1).

    >>> calls_per_batch(lambda: None, 1e-4) > 1
    True
    """
    t0 = timer()
    fn()
    one = max(timer() - t0, 1e-7)
    return max(1, math.ceil(min_time / one))


def python_calls(fn: Callable[[], object]) -> list[str]:
    """The names of the Python functions fn() enters, in order (sys.setprofile's "call" events;
    fn itself included): how many frames one call of an op costs.

    >>> python_calls(lambda: sorted([2, 1], key=abs))  # (abs and sorted run in C)
    ['<lambda>']
    """
    calls: list[str] = []

    def prof(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    old = sys.getprofile()
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(old)
    return calls


def _batch(fn: Callable[[], object], number: int, timer: Callable[[], float]) -> float:
    t0 = timer()
    for _ in range(number):
        fn()
    return (timer() - t0) / number


def paired(
    fns: Sequence[Callable[[], object]],
    number: int | Sequence[int],
    rounds: int = 5,
    timer: Callable[[], float] = time.process_time,
) -> tuple[list[float], list[float]]:
    """Time `fns` in alternation: (best time per call of each, median ratio of each to the first).

    `number` is the calls per batch, one for all or one per function.
    """
    numbers = [number] * len(fns) if isinstance(number, int) else list(number)
    per_round: list[list[float]] = [[] for _ in fns]
    for r in range(rounds):
        order = list(range(len(fns)))
        order = order[r % len(order) :] + order[: r % len(order)]  # who goes first rotates
        for i in order:
            per_round[i].append(max(_batch(fns[i], numbers[i], timer), 1e-9))
    times = [min(ts) for ts in per_round]
    ratios = [statistics.median(t / b for t, b in zip(ts, per_round[0])) for ts in per_round]
    return times, ratios
