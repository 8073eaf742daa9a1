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

__all__ = ["FACE_MODULES", "EXCLUDED", "face_functions", "covered", "same_objects", "Recorder", "ROOTS"]

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


_IO = "file and text I/O: NumPy's own, on arrays (a tensor's values: t.numpy())"
_CONFIG = "NumPy's configuration or introspection: no array argument"
_TEXT = "formats numbers or a dtype as text: NumPy's own, no array result"
_DATES = "datetime64 and business days: tensors hold no dates"
_DTYPES = "takes dtypes, not arrays: NumPy's own (the dtype objects are NumPy's)"
_STATE = "the state of NumPy's global generator: NumPy's own (the seeded entries use it)"
_TESTS = "runs NumPy's own test suite"

# Face functions without an entry, each with the reason (a test fails on a function with neither).
EXCLUDED: dict[str, str] = {
    **{
        f"np.{n}": _IO for n in "load loadtxt genfromtxt fromfile fromregex save savetxt savez savez_compressed".split()
    },
    **{
        f"np.{n}": _CONFIG
        for n in "get_include get_printoptions set_printoptions printoptions getbufsize setbufsize geterr "
        "seterr geterrcall seterrcall show_config show_runtime info".split()
    },
    **{f"np.{n}": _TEXT for n in "base_repr binary_repr format_float_positional format_float_scientific".split()},
    "np.array_repr": "a tensor's repr is its own (tensor(...)); np.array2string and np.array_str have entries",
    **{f"np.{n}": _DATES for n in "busday_count busday_offset is_busday datetime_as_string datetime_data".split()},
    **{f"np.{n}": _DTYPES for n in "isdtype issubdtype promote_types mintypecode typename".split()},
    **{f"np.{n}": "NumPy's matrix class: tensors have no matrix subclass" for n in ("asmatrix", "bmat")},
    "np.frompyfunc": "makes a ufunc of object arrays from a Python function: NumPy's own",
    "np.nested_iters": "NumPy's iterator objects over arrays: NumPy's own",
    "np.from_dlpack": "NumPy's own: imports an array through DLPack as an ndarray (not a tensor)",
    "np.isfortran": "reads an ndarray's flags: NumPy's own (a tensor has none: AttributeError, as for a list)",
    **{f"{m}.test": _TESTS for m in ("np", "np.linalg", "np.fft", "np.random")},
    **{
        f"np.random.{n}": _STATE
        for n in "seed get_state set_state default_rng get_bit_generator set_bit_generator".split()
    },
    "np.random.bytes": "random bytes, not an array: NumPy's own",
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


def same_objects(names: set) -> set:
    """The face functions that are the very objects of `names` (pushforward.array_api.special is
    pushforward.scipy.special's functions; xp.linalg.matmul is xp.matmul): covered by their entries."""
    objects = {id(_lookup(n)) for n in names if n.rsplit(".", 1)[0] in FACE_MODULES}
    return {
        f"{label}.{n}"
        for label, fns in face_functions().items()
        for n in fns
        if id(getattr(FACE_MODULES[label], n)) in objects
    }


def _lookup(name: str) -> Any:
    label, fn = name.rsplit(".", 1)
    return getattr(FACE_MODULES[label], fn)


def _sin_face() -> Face:
    return Face(lambda np, a: np.sin(a), (V3,))
