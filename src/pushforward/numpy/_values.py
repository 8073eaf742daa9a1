"""NumPy's reading of array-likes, for values that may hold tensors.

`np.array([t1, t2])`, `np.mean([t1, t2])` read nested lists of tensors, arrays and numbers as
one array; here such a list becomes one tensor, stacked by ops so derivatives flow through every
element. The NEP-18 handlers and `pushforward.numpy` read their array arguments with `as_t`.

>>> import pushforward as pf
>>> as_t([pf.tensor(1.0), 2.0, pf.tensor(3.0)])
tensor([1., 2., 3.])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpIndexError, OpTypeError, OpValueError, PushforwardError
from ..ops import generated as ops

__all__ = [
    "AxisError",
    "axes_of",
    "as_t",
    "has_tensor",
    "floating",
    "along",
    "reduced",
    "array",
    "asarray_or_value",
    "public_functions",
]


class AxisError(OpIndexError, np.exceptions.AxisError):
    """An axis out of range for a NumPy function: NumPy's AxisError (a ValueError and an IndexError)
    and pushforward's OpIndexError, so NumPy code's `except np.exceptions.AxisError:` and torch
    code's `except IndexError:` both catch it."""


def numpy_error(who: str, exc: Exception) -> Exception:
    """NumPy's error exc from a function run on tensors' values, as ours naming `who` and of the
    same builtin kind (ValueError, TypeError, IndexError, AxisError), so NumPy code's `except`
    clauses still catch it; ours pass as they are.

    >>> type(numpy_error("np.nonzero", ValueError("0-d"))).__name__
    'OpValueError'
    """
    if isinstance(exc, PushforwardError):
        return exc
    kinds = ((np.exceptions.AxisError, AxisError), (ValueError, OpValueError), (TypeError, OpTypeError))
    cls = next((ours for theirs, ours in kinds if isinstance(exc, theirs)), OpIndexError)
    return cls(f"{who}: {exc}")


def axes_of(axis: Any, ndim: int, who: str) -> tuple[int, ...]:
    """NumPy's axis (an int or a sequence of ints) for ndim dims as non-negative ints, NumPy's
    AxisError naming `who` for one out of range and its ValueError for one repeated.

    >>> axes_of((-1, 0), 3, "np.squeeze")
    (2, 0)
    """
    out = []
    for a in axis if isinstance(axis, (tuple, list)) else (axis,):
        if not -ndim <= int(a) < ndim:
            raise AxisError(f"{who}: axis {int(a)} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise OpValueError(f"{who}: repeated axis in {axis!r}")
    return tuple(out)


def has_tensor(x: Any) -> bool:
    """True if x is a tensor or a (nested) list/tuple holding one."""
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(has_tensor(v) for v in x)
    return False


def _stack_nested(x: Any) -> Tensor:
    if not isinstance(x, (list, tuple)):
        return creation.as_tensor(x) if not isinstance(x, Tensor) else x
    if not x:
        return creation.tensor(np.zeros(0))
    parts = [_stack_nested(v) for v in x]
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) != 1:
        raise OpValueError(
            f"np.array: setting an array element with a sequence: the elements have shapes {sorted(shapes)} "
            "(an inhomogeneous list)"
        )
    dt = np.result_type(*[p.dtype for p in parts])
    return ops.stack([p if p.dtype == dt else p.to(dt) for p in parts], 0)


def as_t(x: Any) -> Tensor:
    """x as a tensor: tensors pass, nested lists holding tensors are stacked, the rest is wrapped."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and has_tensor(x):
        return _stack_nested(x)
    return creation.as_tensor(x)


def floating(x: Tensor) -> Tensor:
    """x, or x in float64 if it holds integers or booleans: NumPy's mean, var, quantile, ... and
    SciPy's functions of integers compute in float64 (where torch refuses them)."""
    return x if x.dtype.kind in "fc" else x.to(np.dtype(np.float64))


def along(x: Tensor, axis: Any) -> tuple[Tensor, Any]:
    """x and the axis a NumPy function runs along: axis None runs along x flattened (np.sort,
    np.take, np.cumsum, ...)."""
    return (x.reshape(-1), 0) if axis is None else (x, axis)


def reduced(fn: Callable, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """The reduction fn(x, dims, keepdims) over NumPy's axis: None reduces every axis, an int or a
    sequence of ints those axes, an empty sequence none (NumPy's x itself, where the ops read no
    dims as all of them): the reduction over a new axis of size one keeps each op's dtype rule."""
    if isinstance(axis, (tuple, list)) and not axis:
        return fn(x.unsqueeze(-1), -1, False)
    if axis is None:
        return fn(x) if not keepdims else fn(x, tuple(range(x.ndim)), True)
    if type(axis) is int:
        return fn(x, axis, keepdims)
    if type(axis) is tuple:
        for a in axis:  # (ints already, the commonest: passed as they are, no generator's frames)
            if type(a) is not int:
                break
        else:
            return fn(x, axis, keepdims)
    return fn(x, tuple(int(a) for a in axis) if isinstance(axis, (tuple, list)) else int(axis), keepdims)


def public_functions(namespace: dict) -> list[str]:
    """The public functions a module defines, read off its globals: a face module's `__all__`, so
    that each NumPy or SciPy name it serves is written once, where it is defined."""
    mod = namespace["__name__"]
    return [n for n, v in namespace.items() if n[0] != "_" and callable(v) and getattr(v, "__module__", None) == mod]


def array(obj: Any, dtype: Any = None, *, copy: bool = True, ndmin: int = 0, **kwargs: Any) -> Any:
    """np.array of values that may hold tensors: a tensor if they do, NumPy's array otherwise."""
    if not has_tensor(obj):
        return np.array(obj, dtype=dtype, copy=copy, ndmin=ndmin, **kwargs)
    t = as_t(obj)
    t = t.clone() if copy and isinstance(obj, Tensor) else t
    if dtype is not None and t.dtype != np.dtype(dtype):
        t = t.to(np.dtype(dtype))
    if t.ndim < ndmin:
        t = t.reshape(*([1] * (ndmin - t.ndim)), *t.shape)
    return t


def asarray_or_value(obj: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """np.asarray of values that may hold tensors: a tensor (not copied) if they do."""
    if not has_tensor(obj):
        return np.asarray(obj, dtype=dtype, **kwargs)
    t = as_t(obj)
    return t if dtype is None or t.dtype == np.dtype(dtype) else t.to(np.dtype(dtype))
