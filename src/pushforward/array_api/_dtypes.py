"""The standard's data types and where its dtype rules differ from NumPy's: promotion only within
a kind (result_type, can_cast), finfo/iinfo with Python numbers, astype never dropping an
imaginary part. isdtype is NumPy's, over the standard's dtypes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import numpy as pnp
from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._common import DTYPES, SCALARS, check_array, dtype_of

__all__ = [*DTYPES, "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]

globals().update(DTYPES)
KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu", "real floating": "f"}
KINDS |= {"complex floating": "c", "numeric": "iufc"}


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
    """Machine limits of a floating data type (a complex type gives its real part's), as Python floats.

    >>> import pushforward.array_api as xp
    >>> xp.finfo(xp.float32).bits
    32
    """
    dt = dtype_of("finfo", type)
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
    dt = dtype_of("iinfo", type)
    if dt.kind not in "iu":
        raise OpTypeError(f"array_api.iinfo(): {dt} is not an integer data type")
    i = np.iinfo(dt)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), dt)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether dtype (of the standard) is of the kind (a dtype, a kind name, or a tuple of either): NumPy's.

    >>> import pushforward.array_api as xp
    >>> xp.isdtype(xp.float32, ("integral", "real floating"))
    True
    """
    if isinstance(dtype, Tensor):
        raise OpTypeError("array_api.isdtype(): expected a data type, got an array")
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k not in KINDS:
            raise OpValueError(f"array_api.isdtype(): unknown kind {k!r}; kinds are {sorted(KINDS)}")
    return pnp.isdtype(dtype_of("isdtype", dtype), kind)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype the standard's promotion gives (Python scalars are weak: they take the arrays' dtype).

    >>> import pushforward.array_api as xp
    >>> xp.result_type(xp.int8, xp.uint8), xp.result_type(xp.float32, 1.0)
    (dtype('int16'), dtype('float32'))
    """
    dts = [dtype_of("result_type", a) for a in arrays_and_dtypes if not isinstance(a, SCALARS)]
    if not dts:
        raise OpValueError("array_api.result_type(): needs at least one array or dtype")
    out = dts[0]
    for dt in dts[1:]:
        out = _promote(out, dt)
    for s in (a for a in arrays_and_dtypes if isinstance(a, SCALARS)):
        out = _with_scalar(out, s)
    return out


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """NumPy's promotion within a kind (the standard's table); none across kinds, nor for a signed
    integer with uint64 (NumPy's float64 is of another kind)."""
    if (a.kind == "b") != (b.kind == "b"):
        raise OpTypeError(f"array_api.result_type(): no promotion between {a} and {b} in the standard")
    if {a.kind, b.kind} in ({"i", "f"}, {"u", "f"}, {"i", "c"}, {"u", "c"}):
        raise OpTypeError(f"array_api.result_type(): no promotion between {a} and {b} in the standard (mixed kinds)")
    if {a.kind, b.kind} == {"i", "u"} and np.dtype(np.uint64) in (a, b):
        raise OpTypeError(f"array_api.result_type(): {a} and {b} have no common type in the standard")
    return np.promote_types(a, b)


def _with_scalar(dt: np.dtype, s: Any) -> np.dtype:
    kind = {type(True): "b", int: "i", float: "f", complex: "c"}[type(s)]
    if kind == "b" and dt.kind != "b":
        raise OpTypeError(f"array_api.result_type(): a bool scalar does not combine with {dt}")
    if kind == "b" or dt.kind == "c" or (kind == "i" and dt.kind in "iuf") or (kind == "f" and dt.kind == "f"):
        return dt
    if kind == "c" and dt.kind == "f":
        return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)
    raise OpTypeError(f"array_api.result_type(): a {type(s).__name__} scalar does not combine with {dt}")


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether the promotion rules allow the cast (NumPy's "safe" casting, never complex to real).

    >>> import pushforward.array_api as xp
    >>> xp.can_cast(xp.int8, xp.int64), xp.can_cast(xp.float64, xp.float32)
    (True, False)
    """
    a, b = dtype_of("can_cast", from_), dtype_of("can_cast", to)
    # the cross-kind casts the standard leaves open (int8 to float64) are NumPy's; never a
    # complex to a real, nor a float to an integer
    if (a.kind == "c" and b.kind != "c") or (a.kind in "fc" and b.kind in "iub"):
        return False
    return np.can_cast(a, b, casting="safe")


def astype(x: Tensor, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """x cast to dtype (a differentiable copy; copy=False returns x itself when nothing changes).

    >>> import pushforward.array_api as xp
    >>> xp.astype(xp.asarray([1.5, 2.5]), xp.int64)
    tensor([1, 2])
    """
    dt = dtype_of("astype", dtype)
    if check_array("astype", x).dtype == dt and not copy:
        return x
    if x.dtype.kind == "c" and dt.kind != "c":
        raise OpTypeError(f"array_api.astype(): casting {x.dtype} to {dt} drops the imaginary part; take real() first")
    return ops.to(x, dt, copy=True) if dt != x.dtype else ops.clone(x)
