"""NumPy's creation functions making tensors: `np.zeros(shape, like=t)` (NEP 35) and the drop-in's
`np.zeros`, `np.empty`, `np.eye`, ... (`pushforward.numpy`), so that a program that allocates a
buffer and fills it (`out = np.zeros(n); out[i] = f(x)`) writes by our in-place semantics: a plain
tensor written with a dual value becomes dual (docs/differentiating-numpy.md, "Allocate, then fill").

The values are NumPy's (same dtypes, same arguments); a fill value or an end point that carries a
derivative keeps it (`np.full(n, x)`, `np.linspace(a, b)`).

>>> import numpy as np, pushforward as pf
>>> np.zeros(2, like=pf.tensor(1.0))
tensor([0., 0.])
>>> making(np.arange)(3)
tensor([0, 1, 2])
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..core import creation
from ..core.backend import fresh_array
from ..core.tensor import Tensor, has_derivative, wrap
from . import _math as M
from ._values import as_t, has_tensor

__all__ = ["making", "full", "fromfunction", "ndarray", "CREATION", "LIKE"]

# dtype kinds a tensor holds (objects, strings, dates and records stay NumPy's)
_TENSOR_KINDS = frozenset("biufc")


def to_tensors(out: Any) -> Any:
    """NumPy's result (new arrays) with its numeric arrays as tensors, tuples and lists kept; made
    as pf.zeros makes its array, so pf.compile's trace records what is written into them."""
    if isinstance(out, np.ndarray) and not isinstance(out, Tensor) and out.dtype.kind in _TENSOR_KINDS:
        return wrap(fresh_array(out))
    if type(out) in (tuple, list):
        return type(out)(to_tensors(o) for o in out)
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # a named tuple (np.linalg.svd's, ...)
        return type(out)(*(to_tensors(o) for o in out))
    return out


def values(x: Any) -> Any:
    """x with every tensor as its NumPy values (lists and tuples looked into)."""
    if isinstance(x, Tensor):
        return x.detach().numpy()
    if type(x) in (list, tuple):
        return type(x)(values(v) for v in x)
    return x


def making(fn: Callable) -> Callable:
    """NumPy's creation function fn, returning tensors (its `like=` is not needed any more)."""

    @functools.wraps(fn)
    def f(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("like", None)
        # tensors among the arguments go to NumPy's own call: its dispatch runs their handler
        # (np.logspace of tensor end points keeps their derivative) or refuses a lost derivative
        return to_tensors(fn(*args, **kwargs))

    return f


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *, device: Any = None, like: Any = None):
    """np.full, a tensor; a fill value with a derivative gives every element that derivative."""
    if isinstance(fill_value, Tensor) or (has_tensor(fill_value) and not isinstance(fill_value, str)):
        fill = as_t(fill_value)
        dt = np.dtype(dtype) if dtype is not None else fill.dtype
        base = to_tensors(np.zeros(shape, dtype=dt))
        return base + (fill if fill.dtype == dt else fill.to(dt))
    return to_tensors(np.full(shape, fill_value, dtype=dtype, order=order))


def fromfunction(function: Callable, shape: Any, *, dtype: Any = float, like: Any = None, **kwargs: Any) -> Any:
    """np.fromfunction: function called on index tensors (so its result is a tensor)."""
    grids = np.indices(shape, dtype=dtype)
    return function(*to_tensors(list(grids)), **kwargs)


def _array(
    obj: Any,
    dtype: Any = None,
    *,
    copy: bool = True,
    order: str = "K",
    subok: bool = False,
    ndmin: int = 0,
    like: Any = None,
):
    """np.array: a tensor (lists holding tensors are stacked, so their derivatives stay)."""
    if has_tensor(obj):
        t = as_t(obj)
        t = t.clone() if copy and isinstance(obj, Tensor) else t
        t = t if dtype is None or t.dtype == np.dtype(dtype) else t.to(np.dtype(dtype))
        return t.reshape(*([1] * (ndmin - t.ndim)), *t.shape) if t.ndim < ndmin else t
    return to_tensors(np.array(obj, dtype=dtype, copy=copy, order=order, ndmin=ndmin))


def _asarray(a: Any, dtype: Any = None, order: Any = None, *, like: Any = None, **kwargs: Any) -> Any:
    """np.asarray: the tensor itself, a list holding tensors stacked, an array shared as a tensor."""
    if isinstance(a, Tensor):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.to(np.dtype(dtype))
    if has_tensor(a):
        return _array(a, dtype, copy=False)
    out = np.asarray(a, dtype=dtype, order=order, **kwargs)
    return creation.as_tensor(out) if out.dtype.kind in _TENSOR_KINDS else out  # (sharing memory)


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    if has_tensor(start) or has_tensor(stop):
        return M.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    return to_tensors(np.linspace(start, stop, num, endpoint, retstep, dtype, axis))


def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return a.clone() if isinstance(a, Tensor) else _array(a, copy=True)


class _ArrayType(type):
    """isinstance(x, np.ndarray) in the drop-in: NumPy's arrays and tensors both are."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (np.ndarray, Tensor))

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, (np.ndarray, Tensor))


class ndarray(np.ndarray, metaclass=_ArrayType):
    """The drop-in's np.ndarray: constructing one (`np.ndarray((n, m), dtype)`, the uninitialised
    allocation some programs use) makes a tensor; tensors and arrays are its instances."""

    def __new__(
        cls, shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0, strides: Any = None, order: Any = None
    ):
        return to_tensors(
            np.zeros(shape, dtype, order=order or "C")
            if buffer is None
            else np.ndarray(shape, dtype, buffer, offset, strides, order)
        )


# the functions that make new arrays, by name: a tensor from each
CREATION: dict[str, Callable] = {
    **{
        n: making(getattr(np, n))
        for n in (
            "zeros",
            "ones",
            "eye",
            "identity",
            "arange",
            "logspace",
            "geomspace",
            "indices",
            "tri",
            "frombuffer",
            "fromiter",
            "fromstring",
            "zeros_like",
            "ones_like",
        )
        if callable(getattr(np, n, None))
    },
    # np.empty's values are unspecified: zeros here, so no stale memory (a freed intermediate's
    # values) is ever read, and pf.compile never mistakes it for a traced value become constant
    "empty": making(np.zeros),
    "empty_like": making(np.zeros_like),
    "full": full,
    "fromfunction": fromfunction,
    "array": _array,
    "asarray": _asarray,
    "asanyarray": _asarray,
    "ascontiguousarray": _asarray,
    "asarray_chkfinite": making(np.asarray_chkfinite),
    "linspace": _linspace,
    "copy": _copy,
    "ndarray": ndarray,
}

# NEP 35: np.<name>(..., like=t) calls t.__array_function__ with NumPy's own function
LIKE: dict = {
    getattr(np, n): CREATION[n]
    for n in ("zeros", "ones", "empty", "eye", "identity", "arange", "full", "array", "asarray", "fromfunction")
}
LIKE.update({np.asanyarray: _asarray, np.ascontiguousarray: _asarray, np.frombuffer: CREATION["frombuffer"]})
LIKE.update({np.fromiter: CREATION["fromiter"], np.tri: CREATION["tri"]})


def keeps_derivative(x: Any) -> bool:
    """Does x (a tensor, or a list holding tensors) carry a derivative?"""
    if isinstance(x, Tensor):
        return has_derivative(x)
    if type(x) in (list, tuple):
        return any(keeps_derivative(v) for v in x)
    return False
