"""Creation functions of the standard, with its copy semantics (asarray's copy=True/False/None)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.creation import as_tensor
from ..core.tensor import Tensor, device as _device
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._common import check_array
from ._dtypes import _dtype

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]


def _dt(name: str, dtype: Any) -> np.dtype | None:
    return None if dtype is None else _dtype(name, dtype)


def _check_device(name: str, device: Any) -> None:
    if device is not None:
        _device(device)


def _new(a: np.ndarray, device: Any, name: str) -> Tensor:
    _check_device(name, device)
    return as_tensor(a)


def _shape(shape: Any) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Tensor:
    """obj as an array: copy=None copies only if needed, True always, False never (error if it must).

    >>> import pushforward.array_api as xp
    >>> x = xp.asarray([1.0, 2.0]); xp.asarray(x) is x
    True
    """
    _check_device("asarray", device)
    dt = _dt("asarray", dtype)
    if isinstance(obj, Tensor):
        if dt is None or dt == obj.dtype:
            return ops.clone(obj) if copy else obj
        if copy is False:
            raise OpValueError(f"array_api.asarray(): casting {obj.dtype} to {dt} needs a copy, and copy=False")
        return ops.to(obj, dt, copy=True)
    if copy is False and not _shares_buffer(obj):
        raise OpValueError(f"array_api.asarray(): a {type(obj).__name__} cannot be used without a copy (copy=False)")
    if isinstance(obj, (list, tuple)) and _holds_tensors(obj):
        out = _stacked(obj)  # differentiable: the tensors' derivatives flow into the result
        return out if dt is None or out.dtype == dt else ops.to(out, dt, copy=False)
    a = np.asarray(obj) if dt is None else np.asarray(obj, dtype=dt)
    if copy is False and not np.shares_memory(a, np.asarray(obj)):
        raise OpValueError(f"array_api.asarray(): converting to {a.dtype} needs a copy, and copy=False")
    if copy or (copy is None and not isinstance(obj, np.ndarray) and a.base is not None):
        a = a.copy()
    return as_tensor(a)


def _shares_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return isinstance(obj, np.ndarray)
    return True


def _holds_tensors(obj: Any) -> bool:
    if isinstance(obj, Tensor):
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_tensors(o) for o in obj)


def _stacked(obj: Any) -> Tensor:
    """Nested sequences of tensors and numbers, stacked by our ops."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        return ops.stack([_stacked(o) for o in obj], 0)
    return as_tensor(np.asarray(obj))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Evenly spaced values in [start, stop).

    >>> import pushforward.array_api as xp
    >>> xp.arange(3)
    tensor([0, 1, 2])
    """
    dt = _dt("arange", dtype)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise OpValueError("array_api.arange(): step must not be 0")
    floats = any(isinstance(v, float) for v in (start, stop, step))
    dt = dt or (np.dtype(np.float64) if floats else np.dtype(np.int64))
    n = max(int(np.ceil((stop - start) / step)), 0)
    a = (start + step * np.arange(n, dtype=np.float64 if dt.kind == "f" else None)).astype(dt)
    return _new(a, device, "arange")


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialised array (zeros here).

    >>> import pushforward.array_api as xp
    >>> xp.empty((2,)).shape
    (2,)
    """
    return _new(np.zeros(_shape(shape), _dt("empty", dtype) or np.float64), device, "empty")


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An array of zeros.

    >>> import pushforward.array_api as xp
    >>> xp.zeros(2)
    tensor([0., 0.])
    """
    return _new(np.zeros(_shape(shape), _dt("zeros", dtype) or np.float64), device, "zeros")


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An array of ones.

    >>> import pushforward.array_api as xp
    >>> xp.ones(2, dtype=xp.int8)
    tensor([1, 1], dtype=pushforward.int8)
    """
    return _new(np.ones(_shape(shape), _dt("ones", dtype) or np.float64), device, "ones")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An array filled with fill_value (its dtype from the value's kind when dtype is None).

    >>> import pushforward.array_api as xp
    >>> xp.full((2,), 3)
    tensor([3, 3])
    """
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _dt("full", dtype) or _scalar_dtype(fill_value)
    return _new(np.full(_shape(shape), fill_value, dtype=dt), device, "full")


def _scalar_dtype(v: Any) -> np.dtype:
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return np.dtype(np.int64)
    if isinstance(v, float):
        return np.dtype(np.float64)
    if isinstance(v, complex):
        return np.dtype(np.complex128)
    raise OpTypeError(f"array_api.full(): fill_value must be a Python scalar, got {type(v).__name__}")


def _like(name: str, x: Tensor, dtype: Any, device: Any, fill: Any) -> Tensor:
    check_array(name, x)
    dt = _dt(name, dtype) or x.dtype
    return _new(np.full(x.shape, fill, dtype=dt), device, name)


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialised array like x (zeros here).

    >>> import pushforward.array_api as xp
    >>> xp.empty_like(xp.ones(2)).shape
    (2,)
    """
    return _like("empty_like", x, dtype, device, 0)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Zeros of x's shape and dtype.

    >>> import pushforward.array_api as xp
    >>> xp.zeros_like(xp.ones(2))
    tensor([0., 0.])
    """
    return _like("zeros_like", x, dtype, device, 0)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Ones of x's shape and dtype.

    >>> import pushforward.array_api as xp
    >>> xp.ones_like(xp.zeros(2))
    tensor([1., 1.])
    """
    return _like("ones_like", x, dtype, device, 1)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """fill_value in x's shape and dtype.

    >>> import pushforward.array_api as xp
    >>> xp.full_like(xp.zeros(2), 7.0)
    tensor([7., 7.])
    """
    return _like("full_like", x, dtype, device, fill_value)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None) -> Tensor:
    """Ones on the k-th diagonal.

    >>> import pushforward.array_api as xp
    >>> xp.eye(2, k=1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _new(np.eye(n_rows, n_cols, k, dtype=_dt("eye", dtype) or np.float64), device, "eye")


def linspace(
    start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None, endpoint: bool = True
) -> Tensor:
    """num evenly spaced values from start to stop.

    >>> import pushforward.array_api as xp
    >>> xp.linspace(0.0, 1.0, 3)
    tensor([0. , 0.5, 1. ])
    """
    dt = _dt("linspace", dtype)
    if dt is None:
        dt = np.dtype(np.complex128 if isinstance(start, complex) or isinstance(stop, complex) else np.float64)
    return _new(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt), device, "linspace")


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list:
    """Coordinate matrices from coordinate vectors (differentiable; indexing "xy" by default).

    >>> import pushforward.array_api as xp
    >>> [g.shape for g in xp.meshgrid(xp.arange(2), xp.arange(3))]
    [(3, 2), (3, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise OpValueError(f"array_api.meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    return list(ops.meshgrid(*arrays, indexing=indexing))


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The lower triangle of each matrix (differentiable).

    >>> import pushforward.array_api as xp
    >>> xp.tril(xp.ones((2, 2)))
    tensor([[1., 0.],
            [1., 1.]])
    """
    return ops.tril(check_array("tril", x), k)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The upper triangle of each matrix (differentiable).

    >>> import pushforward.array_api as xp
    >>> xp.triu(xp.ones((2, 2)))
    tensor([[1., 1.],
            [0., 1.]])
    """
    return ops.triu(check_array("triu", x), k)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """An array from any object with __dlpack__ (a NumPy array, a pushforward or torch tensor...).

    >>> import numpy as np, pushforward.array_api as xp
    >>> xp.from_dlpack(np.arange(3.0))
    tensor([0., 1., 2.])
    """
    _check_device("from_dlpack", device)
    if isinstance(x, Tensor):
        return ops.clone(x) if copy else x
    if not hasattr(x, "__dlpack__"):
        raise OpTypeError(f"array_api.from_dlpack(): {type(x).__name__} has no __dlpack__ method")
    a = np.from_dlpack(x, copy=copy)
    return as_tensor(a)
