"""The standard's data types, their promotion (NumPy's, which contains the standard's table),
finfo/iinfo, can_cast, isdtype, result_type and astype."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._common import SCALARS, check_array

__all__ = [
    "DTYPES",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "astype",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
    "finfo_object",
    "iinfo_object",
]

bool = np.dtype(np.bool_)  # noqa: A001 - the standard's name
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

DTYPES = {
    "bool": bool,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "float32": float32,
    "float64": float64,
    "complex64": complex64,
    "complex128": complex128,
}
_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def _dtype(name: str, x: Any) -> np.dtype:
    dt = x.dtype if isinstance(x, Tensor) else x
    try:
        dt = np.dtype(dt)
    except TypeError:
        raise OpTypeError(f"array_api.{name}(): {x!r} is not a data type or an array") from None
    if dt not in DTYPES.values():
        raise OpTypeError(f"array_api.{name}(): {dt} is not a data type of the Array API standard")
    return dt


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating data type (the standard's finfo object)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer data type (the standard's iinfo object)."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Machine limits of a floating data type (a complex type gives its real part's).

    >>> import pushforward.array_api as xp
    >>> xp.finfo(xp.float32).bits
    32
    """
    dt = _dtype("finfo", type)
    if dt.kind not in "fc":
        raise OpTypeError(f"array_api.finfo(): {dt} is not a floating data type")
    f = np.finfo(dt)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), f.dtype)


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Machine limits of an integer data type.

    >>> import pushforward.array_api as xp
    >>> xp.iinfo(xp.int8).max
    127
    """
    dt = _dtype("iinfo", type)
    if dt.kind not in "iu":
        raise OpTypeError(f"array_api.iinfo(): {dt} is not an integer data type")
    i = np.iinfo(dt)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), dt)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether dtype is of the kind (a dtype, a kind name, or a tuple of either).

    >>> import pushforward.array_api as xp
    >>> xp.isdtype(xp.float32, ("integral", "real floating"))
    True
    """
    dt = _dtype("isdtype", dtype) if not isinstance(dtype, Tensor) else None
    if dt is None:
        raise OpTypeError("array_api.isdtype(): expected a data type, got an array")
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise OpValueError(f"array_api.isdtype(): unknown kind {kind!r}; kinds are {sorted(_KINDS)}")
        return dt.kind in _KINDS[kind]
    return dt == _dtype("isdtype", kind)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype the promotion rules give (Python scalars are weak: they take the arrays' dtype).

    >>> import pushforward.array_api as xp
    >>> xp.result_type(xp.int8, xp.uint8), xp.result_type(xp.float32, 1.0)
    (dtype('int16'), dtype('float32'))
    """
    dts = [_dtype("result_type", a) for a in arrays_and_dtypes if not isinstance(a, SCALARS)]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, SCALARS)]
    if not dts:
        raise OpValueError("array_api.result_type(): needs at least one array or dtype")
    out = dts[0]
    for dt in dts[1:]:
        out = _promote(out, dt)
    for s in scalars:
        out = _with_scalar(out, s)
    return out


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    if (a.kind == "b") != (b.kind == "b"):
        raise OpTypeError(f"array_api.result_type(): no promotion between {a} and {b} in the standard")
    if {a.kind, b.kind} in ({"i", "f"}, {"u", "f"}, {"i", "c"}, {"u", "c"}):
        raise OpTypeError(f"array_api.result_type(): no promotion between {a} and {b} in the standard (mixed kinds)")
    if {a.kind, b.kind} == {"i", "u"} and np.dtype(np.uint64) in (a, b):
        # no signed integer holds every uint64 (NumPy's answer, float64, is of another kind)
        raise OpTypeError(f"array_api.result_type(): {a} and {b} have no common type in the standard")
    return np.promote_types(a, b)


def _with_scalar(dt: np.dtype, s: Any) -> np.dtype:
    kind = {type(True): "b", int: "i", float: "f", complex: "c"}[type(s)]
    if kind == "b" or dt.kind == "c" or (kind in "i" and dt.kind in "iuf") or (kind == "f" and dt.kind == "f"):
        if kind == "b" and dt.kind != "b":
            raise OpTypeError(f"array_api.result_type(): a bool scalar does not combine with {dt}")
        return dt
    if kind == "c" and dt.kind == "f":
        return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)
    raise OpTypeError(f"array_api.result_type(): a {type(s).__name__} scalar does not combine with {dt}")


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether the promotion rules allow the cast (NumPy's "safe" casting).

    >>> import pushforward.array_api as xp
    >>> xp.can_cast(xp.int8, xp.int64), xp.can_cast(xp.float64, xp.float32)
    (True, False)
    """
    a, b = _dtype("can_cast", from_), _dtype("can_cast", to)
    # NumPy's safe casts (the standard's promotions, and the cross-kind casts it leaves open, such
    # as int8 to float64); never complex to real, nor a float to an integer
    if (a.kind == "c" and b.kind != "c") or (a.kind in "fc" and b.kind in "iub"):
        return False
    return np.can_cast(a, b, casting="safe")


def astype(x: Tensor, dtype: Any, /, *, copy: "bool" = True, device: Any = None) -> Tensor:
    """x cast to dtype (a differentiable copy; copy=False returns x itself when nothing changes).

    >>> import pushforward.array_api as xp
    >>> xp.astype(xp.asarray([1.5, 2.5]), xp.int64)
    tensor([1, 2])
    """
    check_array("astype", x)
    dt = _dtype("astype", dtype)
    if dt == x.dtype and not copy:
        return x
    if x.dtype.kind == "c" and dt.kind != "c":
        raise OpTypeError(f"array_api.astype(): casting {x.dtype} to {dt} drops the imaginary part; take real() first")
    return ops.to(x, dt, copy=True) if dt != x.dtype else ops.clone(x)
