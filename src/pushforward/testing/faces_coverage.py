"""Which functions the faces offer, and which of them the faces' database calls.

`face_functions()` lists every callable public name of pushforward.numpy (and its linalg, fft and
random), of pushforward.scipy's modules and of pushforward.array_api (and its linalg, fft and
special), as "np.sin", "np.linalg.eigh", "scipy.stats.norm.logpdf", "xp.linalg.eigh". An entry
covers the functions its body calls: `covered(entries, root)` runs each body once against a
recording proxy of the namespace, so coverage is what the entries run, not a list kept by hand.

>>> sorted(covered({"a": _sin_face()}, "np"))
['np.sin']
"""

from __future__ import annotations

import types
import warnings
from typing import Any

from .. import array_api as xp
from .. import numpy as pnumpy
from .. import scipy as pscipy
from .faceinfo import V3, Face, face_inputs

__all__ = ["FACE_MODULES", "face_functions", "covered", "Recorder", "ROOTS"]

ROOTS = {"np": pnumpy, "scipy": pscipy, "xp": xp}

FACE_MODULES = {
    "np": pnumpy,
    "np.linalg": pnumpy.linalg,
    "np.fft": pnumpy.fft,
    "np.random": pnumpy.random,
    "scipy.special": pscipy.special,
    "scipy.linalg": pscipy.linalg,
    "scipy.signal": pscipy.signal,
    "scipy.integrate": pscipy.integrate,
    **{f"scipy.stats.{d}": getattr(pscipy.stats, d) for d in pscipy.stats.__all__},
    "xp": xp,
    "xp.linalg": xp.linalg,
    "xp.fft": xp.fft,
    "xp.special": xp.special,
}


def _is_function(obj: Any) -> bool:
    return callable(obj) and not isinstance(obj, (type, types.ModuleType))


def face_functions() -> dict[str, list[str]]:
    """{face module label: its callable public names} (a module's `__all__` when it has one)."""
    out = {}
    for label, mod in FACE_MODULES.items():
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        out[label] = sorted(n for n in names if not n.startswith("_") and _is_function(getattr(mod, n, None)))
    return out


class Recorder:
    """A namespace that records the dotted name of every function taken from it (submodules are
    recorded through, so `ns.linalg.eigh` records "np.linalg.eigh")."""

    def __init__(self, obj: Any, path: str, seen: set) -> None:
        self._obj, self._path, self._seen = obj, path, seen

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        path = f"{self._path}.{name}"
        if isinstance(value, types.ModuleType):
            return Recorder(value, path, self._seen)
        if _is_function(value):
            self._seen.add(path)
        return value

    def __getitem__(self, key: Any) -> Any:  # np.r_ / np.c_ are objects, not functions
        return self._obj[key]


def covered(entries: dict[str, Face], root: str, asarray: Any = None) -> set:
    """The face functions the entries' bodies call, each body run once on tensors."""
    seen: set = set()
    ns = Recorder(ROOTS[root], root, seen)
    for face in entries.values():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                face.fn(ns, *face_inputs(face, asarray))
            except Exception:  # noqa: BLE001, S110 - a failing body is the values check's failure; what it reached counts
                pass
    return seen


def _sin_face() -> Face:
    return Face(lambda np, a: np.sin(a), (V3,))
