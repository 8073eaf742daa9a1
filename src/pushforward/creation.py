"""Tensor factories: torch names and signatures, NumPy dtypes and defaults (float64).

>>> import pushforward as pf
>>> pf.zeros(2, 3).shape
(2, 3)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import OpError, OpTypeError
from .tensor import Tensor, _to_array, wrap

_rng = np.random.default_rng()


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise OpError(f"invalid size {tuple(size)}: sizes must be non-negative integers")
    return tuple(int(s) for s in size)


def _dt(dtype, default=np.float64):
    if dtype is None:
        return np.dtype(default)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise OpTypeError(f"unknown dtype {dtype!r}") from None


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data: Any, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new tensor copying `data` (NumPy's dtype inference: Python floats become float64)."""
    return _finish(_to_array(data, dtype), requires_grad)


def as_tensor(data: Any, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with `data` when it is an ndarray of the right dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == np.dtype(dtype) else data.to(dtype)
    arr = np.asarray(data, dtype=None if dtype is None else np.dtype(dtype))
    if arr.dtype.kind not in "fciub":
        raise OpTypeError(f"as_tensor(): unsupported dtype {arr.dtype}")
    return wrap(arr)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with the ndarray `arr`."""
    if not isinstance(arr, np.ndarray):
        raise OpTypeError(f"from_numpy(): expected np.ndarray (got {type(arr).__name__})")
    return as_tensor(arr)


def zeros(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return _finish(np.zeros(_shape(size), _dt(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return _finish(np.ones(_shape(size), _dt(dtype)), requires_grad)


def empty(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return _finish(np.empty(_shape(size), _dt(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    dt = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
    return _finish(np.full(_shape((size,)), fill_value, dt), requires_grad)


def _like(x, dtype):
    d = x._data if isinstance(x, Tensor) else np.asarray(x)
    return d, (d.dtype if dtype is None else np.dtype(dtype))


def zeros_like(x, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    d, dt = _like(x, dtype)
    return _finish(np.zeros(d.shape, dt), requires_grad)


def ones_like(x, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    d, dt = _like(x, dtype)
    return _finish(np.ones(d.shape, dt), requires_grad)


def empty_like(x, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    d, dt = _like(x, dtype)
    return _finish(np.empty(d.shape, dt), requires_grad)


def full_like(x, fill_value, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    d, dt = _like(x, dtype)
    return _finish(np.full(d.shape, fill_value, dt), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise OpError("arange(): step must be nonzero")
    return _finish(np.arange(start, end, step, dtype=None if dtype is None else np.dtype(dtype)), requires_grad)


def linspace(start, end, steps: int, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    if steps < 0:
        raise OpError(f"linspace(): number of steps must be non-negative (got {steps})")
    return _finish(np.linspace(start, end, steps, dtype=_dt(dtype)), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn/randint."""
    global _rng
    _rng = np.random.default_rng(seed)


def rand(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    return _finish(_rng.random(_shape(size)).astype(_dt(dtype), copy=False), requires_grad)


def randn(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    dt = _dt(dtype)
    a = _rng.standard_normal(_shape(size))
    if dt.kind == "c":
        a = (a + 1j * _rng.standard_normal(_shape(size))) / np.sqrt(2)
    return _finish(a.astype(dt, copy=False), requires_grad)


def randint(low, high=None, size=(), *, dtype=None, device=None) -> Tensor:
    if high is None:
        low, high = 0, low
    return wrap(_rng.integers(low, high, _shape((size,))).astype(_dt(dtype, np.int64)))


def rand_like(x, *, dtype=None) -> Tensor:
    d, dt = _like(x, dtype)
    return wrap(_rng.random(d.shape).astype(dt))


def randn_like(x, *, dtype=None) -> Tensor:
    d, dt = _like(x, dtype)
    return randn(*d.shape, dtype=dt)
