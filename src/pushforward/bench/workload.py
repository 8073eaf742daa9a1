"""What a benchmark workload is: one computation, written once per library, at a size.

A `Workload` holds a builder per library: given a size n it makes the inputs (the same seeded
NumPy arrays for every library) and returns a function of no arguments that runs the computation
once and returns its result (the runner checks that the libraries agree before timing them).
pushforward's version is written once, as a function and its tensor arguments; the eager and the
compiled (`pf.compile`) columns both run it.

>>> from pushforward.bench.workload import inputs
>>> [a.shape for a in inputs(0, (3,), (2, 2))]
[(3,), (2, 2)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import pushforward as pf
from .libraries import NotApplicable, compiled, import_jax, import_torch

__all__ = ["Workload", "inputs", "jax_ready", "tensors"]


def inputs(seed: int, *shapes: tuple) -> list[np.ndarray]:
    """Standard normal float64 arrays of the given shapes, the same on every call with `seed`."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def jax_ready(fn: Callable, *args: Any) -> Callable[[], Any]:
    """A call of a JAX function that waits for the result (JAX dispatches asynchronously)."""
    jax = import_jax()
    return lambda: jax.block_until_ready(fn(*args))


@dataclass(frozen=True)
class Workload:
    """One benchmark computation.

    `pushforward(n)` returns `(fn, args)` (tensors); `numpy(n)` a function of no arguments;
    `torch(torch, n)` and `jax(jax, n)` receive the library module. A missing builder is a library
    the workload has no version for; `not_applicable` says why (shown in the report).
    """

    name: str
    title: str
    size_means: str
    pushforward: Callable[[int], tuple[Callable, tuple]]
    numpy: Callable[[int], Callable[[], Any]] | None = None
    torch: Callable[[Any, int], Callable[[], Any]] | None = None
    jax: Callable[[Any, int], Callable[[], Any]] | None = None
    max_size: int = 2**20
    min_size: int = 1
    compilable: bool = True
    not_applicable: dict[str, str] = field(default_factory=dict)

    def fits(self, n: int) -> bool:
        """Is size n in this workload's range?"""
        return self.min_size <= n <= self.max_size

    def build(self, library: str, n: int) -> Callable[[], Any]:
        """A function of no arguments running this workload in `library` at size n.

        Raises `Unavailable` (the library or a pushforward feature is missing) or `NotApplicable`.
        """
        if library in ("pushforward", "compiled"):
            if library == "compiled" and not self.compilable:
                raise NotApplicable(self.not_applicable.get("compiled", "no compiled version of this workload"))
            fn, args = self.pushforward(n)
            if library == "compiled":
                fn = compiled(fn)
            return lambda: fn(*args)
        builder = {"numpy": self.numpy, "torch": self.torch, "jax": self.jax}[library]
        if builder is None:
            raise NotApplicable(self.not_applicable.get(library, f"no {library} version of this workload"))
        if library == "numpy":
            return builder(n)
        return builder(import_torch() if library == "torch" else import_jax(), n)


def tensors(*arrays: np.ndarray) -> tuple:
    """pushforward tensors over copies of `arrays`."""
    return tuple(pf.tensor(a.copy()) for a in arrays)
