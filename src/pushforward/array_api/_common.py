"""How the Array API face views `pushforward.numpy`: NumPy 2 took the standard's names and
semantics (NEP 56), so most of the standard's functions are NumPy's, run on tensors by
pushforward.numpy. `strict` adds only what the standard asks of a namespace and NumPy does not:
arrays where arrays are expected, the standard's dtypes, its device objects, and arrays (tensors,
never NumPy arrays) in what comes back. See docs/design.md, "The Array API face"."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from ..core.creation import as_tensor
from ..core.tensor import Tensor, device as _device
from ..errors import OpTypeError

__all__ = ["SCALARS", "DTYPES", "check_array", "dtype_of", "constant", "as_result", "strict", "elementwise"]

SCALARS = (bool, int, float, complex)
DTYPES = {n: np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")}
DTYPES |= {n: np.dtype(n) for n in ("uint64", "float32", "float64", "complex64", "complex128")}


def check_array(name: str, x: Any) -> Tensor:
    """x itself if it is a Tensor, else a clear error naming the function."""
    if not isinstance(x, Tensor):
        raise OpTypeError(f"array_api.{name}(): expected an array (a pushforward Tensor), got {type(x).__name__}")
    return x


def dtype_of(name: str, x: Any) -> np.dtype:
    """The standard's dtype x is (or x's dtype, for an array); TypeError for any other."""
    try:
        dt = np.dtype(x.dtype if isinstance(x, Tensor) else x)
    except TypeError:
        raise OpTypeError(f"array_api.{name}(): {x!r} is not a data type or an array") from None
    if dt not in DTYPES.values():
        raise OpTypeError(f"array_api.{name}(): {dt} is not a data type of the Array API standard")
    return dt


def constant(a: Any) -> Tensor:
    """A Tensor holding an ndarray computed from values (indices, counts: no derivative)."""
    return as_tensor(np.array(a, copy=True, order="C"))


def as_result(out: Any) -> Any:
    """out with each NumPy array in it (pushforward.numpy returns indices and counts as NumPy's)
    a tensor, tuples and named tuples keeping their type."""
    if isinstance(out, np.ndarray):
        return constant(out)
    if isinstance(out, tuple):
        items = [as_result(o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    return out


def strict(name: str, fn: Callable, arrays: int = 1, module: str = "pushforward.array_api") -> Callable:
    """fn (a function of pushforward.numpy) as the standard's `name` in `module`: its first `arrays`
    positional arguments must be arrays, `dtype=` a dtype of the standard, `device=` one of ours."""

    @functools.wraps(fn)
    def f(*args: Any, **kwargs: Any) -> Any:
        for a in args[:arrays]:
            if not isinstance(a, Tensor):
                check_array(name, a)
        if kwargs:
            if kwargs.get("dtype") is not None:
                kwargs["dtype"] = dtype_of(name, kwargs["dtype"])
            device = kwargs.pop("device", None)
            if device is not None:
                _device(device)  # the CPU, or a clear error
        out = fn(*args, **kwargs)
        return out if isinstance(out, Tensor) else as_result(out)

    # its signature is the wrapped function's (functools.wraps), typed Any where that
    # function leaves a type open: the wrapper takes what it takes
    try:
        sig = inspect.signature(fn)
    except ValueError:  # a builtin NumPy does not describe
        sig = None
    if sig is not None:
        params = [p.replace(annotation=Any) if p.annotation is p.empty else p for p in sig.parameters.values()]
        ret = Any if sig.return_annotation is sig.empty else sig.return_annotation
        f.__signature__ = sig.replace(parameters=params, return_annotation=ret)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's `{name}`: NumPy's `{fn.__name__}` on tensors (pushforward.numpy)."
    # a function of this namespace: the API reference documents it here (NumPy's own functions
    # reach pushforward.numpy by its dispatch, and their home is not ours)
    f.__module__ = module
    del f.__wrapped__
    return f


def elementwise(name: str, fn: Callable, binary: bool, doc: str | None = None) -> Callable:
    """fn as the standard's element-wise `name`, with the standard's signature: one array, or two
    operands of which at least one is an array and the other a Python scalar (a weak scalar)."""
    if not binary:

        def f(x: Tensor, /) -> Tensor:
            return fn(check_array(name, x))

    else:

        def f(x1: Any, x2: Any, /) -> Tensor:
            if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
                raise OpTypeError(f"array_api.{name}(): at least one operand must be an array (got two scalars)")
            for x in (x1, x2):
                if not isinstance(x, (Tensor, *SCALARS)):
                    raise OpTypeError(
                        f"array_api.{name}(): operands are arrays or Python scalars, got {type(x).__name__}"
                    )
            return fn(x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__module__ = "pushforward.array_api"
    f.__doc__ = doc or f"The standard's `{name}`: NumPy's `{fn.__name__}` on tensors (pushforward.numpy)."
    return f
