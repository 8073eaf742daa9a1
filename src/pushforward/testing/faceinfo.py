"""The faces' database's building blocks (as opinfo.py is the op database's): `Face` (one entry:
a function body written once against a namespace), the sample arrays the entries share, and how an
entry's inputs become tensors and its body a function of its differentiated inputs.

>>> f = Face(lambda np, a: np.sin(a), (V3,))
>>> [t.requires_grad for t in face_inputs(f)]
[True]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..core.creation import tensor

__all__ = [
    "Face",
    "CHECKS",
    "face_inputs",
    "face_function",
    "leaves",
    "M23",
    "M34",
    "V3",
    "V4",
    "P4",
    "SQ",
    "SPD",
    "uniform",
]

# The checks an entry runs; `Face.skip` names the ones that do not apply to it, each with its reason.
CHECKS = ("values", "backward", "forward", "gradgrad", "vmap", "jet", "compile", "dask")


@dataclass
class Face:
    """fn(namespace, *inputs); inputs are arrays, kept in their dtypes (those at `argnums` are the
    differentiated ones, floating). `dispatch` False when NumPy's dispatch cannot reach the call (a
    list holding tensors: only pushforward.numpy reads it). `diff` False: values and dtypes only
    (an integer or boolean result, a utility). `skip`: check name -> why it does not apply.
    `seeded`: a random function, run after seeding NumPy's generator the same way for each side.
    `plain`: no tensor among the inputs, and the face returns NumPy's own arrays. `refuses`: why
    the face refuses a derivative through this function (values checked on tensors that carry none;
    given inputs that require grad, it must raise a TypeError naming the function)."""

    fn: Callable
    inputs: tuple
    argnums: tuple = (0,)
    dispatch: bool = True
    gradgrad: bool = True
    kwargs: dict = field(default_factory=dict)
    diff: bool = True
    tol: float = 1e-10
    skip: dict = field(default_factory=dict)
    seeded: bool = False
    plain: bool = False
    refuses: str = ""

    def runs(self, check: str) -> bool:
        """Whether the entry runs `check` (derivative checks only for differentiable entries)."""
        if check in self.skip:
            return False
        if check == "gradgrad" and not self.gradgrad:
            return False
        return check == "values" or self.diff


_R = np.random.default_rng(7)


def uniform(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Seeded uniform samples in [lo, hi) of `shape` (the entries' inputs)."""
    return _R.uniform(lo, hi, shape)


M23, M34, V3, V4 = uniform(2, 3), uniform(3, 4), uniform(3), uniform(4)
P4 = uniform(4, lo=0.5, hi=2.5)
SQ = uniform(3, 3)
SPD = SQ @ SQ.T + 3 * np.eye(3)


def leaves(out: Any) -> list:
    """The results of a call, lists and tuples flattened."""
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in leaves(o)]
    return [out]


def face_inputs(face: Face, asarray: Callable | None = None) -> list:
    """Fresh tensors of the face's inputs, in their dtypes (those differentiated require grad);
    `asarray` makes them (the Array API namespace's), else `tensor`."""
    out = []
    for i, x in enumerate(face.inputs):
        if type(x) in (int, float, complex, bool):  # a Python number stays one (NumPy's weak scalars)
            out.append(x)
            continue
        a = np.asarray(x)
        t = tensor(a) if asarray is None else asarray(a)
        if face.diff and i in face.argnums:
            t.requires_grad_(True)
        out.append(t)
    return out


def face_function(face: Face, ns: Any, asarray: Callable | None = None) -> Callable:
    """The face as a function of its differentiated inputs, returning its floating tensor outputs."""

    def f(*diff: Any) -> tuple:
        args = face_inputs(face, asarray)
        for i, d in zip(face.argnums, diff):
            args[i] = d
        out = face.fn(ns, *args)
        return tuple(o for o in leaves(out) if hasattr(o, "dtype") and np.dtype(o.dtype).kind in "fc")

    return f
