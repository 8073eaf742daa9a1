"""The libraries `pushforward bench` compares, and how each is loaded.

PyTorch and JAX are optional: they are imported when a benchmark asks for them, and a missing one
is reported as a note (`Unavailable`), never an error. Features of pushforward that a build may
not have (`pf.compile`, `pf.func.sparse_jacfwd`, `pf.func.jet`) are looked up by name the same way.

>>> from pushforward.bench.libraries import LIBRARIES, unavailable
>>> list(LIBRARIES)
['numpy', 'pushforward', 'compiled', 'torch', 'jax']
>>> unavailable("numpy") is None
True
"""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

import pushforward as pf
from ..func import tree_flatten

__all__ = [
    "LIBRARIES",
    "Unavailable",
    "NotApplicable",
    "unavailable",
    "import_torch",
    "import_jax",
    "pf_feature",
    "compiled",
    "to_numpy",
]

# name -> what is measured under that name (the column headings of the report and the plot's legend)
LIBRARIES = {
    "numpy": "NumPy written by hand (the derivative code a person would write)",
    "pushforward": "pushforward, eager",
    "compiled": "pushforward, pf.compile",
    "torch": "PyTorch, eager (torch.func for the transforms)",
    "jax": "JAX, jax.jit",
}


class Unavailable(Exception):
    """A library, or a feature of pushforward, that this installation does not have; the message says which."""


class NotApplicable(Exception):
    """A workload that has no version for a library (say, Taylor mode in PyTorch); the message says why."""


def import_torch() -> types.ModuleType:
    """PyTorch, limited to the threads NumPy's element-wise kernels use (one), or `Unavailable`."""
    try:
        import torch
    except ImportError:
        raise Unavailable("PyTorch is not installed (pip install torch)") from None
    torch.set_num_threads(1)  # the figures compare per-core work: NumPy's ufuncs run on one thread
    return torch


def import_jax() -> types.ModuleType:
    """JAX with float64 enabled (the other libraries compute in float64), or `Unavailable`."""
    try:
        import jax
    except ImportError:
        raise Unavailable("JAX is not installed (pip install jax)") from None
    jax.config.update("jax_enable_x64", True)
    return jax


_LOADERS: dict[str, Callable[[], Any]] = {"torch": import_torch, "jax": import_jax}


def pf_feature(path: str) -> Callable:
    """`pf.compile`, `pf.func.jet`, ... by dotted name below `pf`, or `Unavailable` when this build lacks it.

    >>> pf_feature("func.jvp").__name__
    'jvp'
    """
    obj: Any = pf
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise Unavailable(f"pf.{path} is not available in this build")
    return obj


def compiled(fn: Callable) -> Callable:
    """`fn` compiled by `pf.compile` (`Unavailable` without it)."""
    return pf_feature("compile")(fn)


def unavailable(name: str) -> str | None:
    """Why library `name` cannot run here (a note), or None when it can."""
    if name not in LIBRARIES:
        raise ValueError(f"unknown library {name!r}: choose from {', '.join(LIBRARIES)}")
    try:
        if name in _LOADERS:
            _LOADERS[name]()
        elif name == "compiled":
            pf_feature("compile")
    except Unavailable as e:
        return str(e)
    return None


def to_numpy(result: Any) -> list:
    """A result of any library as a flat list of NumPy arrays (scipy.sparse matrices kept as they are)."""
    leaves, _ = tree_flatten(result)
    out = []
    for leaf in leaves:
        if hasattr(leaf, "tocsr"):  # a scipy.sparse result (a sparse Jacobian)
            out.append(leaf.tocsr())
        elif hasattr(leaf, "detach"):  # a torch or pushforward tensor
            out.append(np.asarray(leaf.detach().numpy()))
        else:
            out.append(np.asarray(leaf))
    return out
