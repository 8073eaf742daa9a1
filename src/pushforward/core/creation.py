"""Tensor factories: torch names and signatures, NumPy dtypes and defaults (float64).

>>> import pushforward as pf
>>> pf.zeros(2, 3).shape
(2, 3)
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .backend import empty_in_layout_of, fresh_array
from .batched import BatchedTensor
from ..errors import OpError, OpTypeError
from .lazy import is_lazy_array
from .tensor import Tensor, _to_array, lazy_array, wrap

__all__ = [
    "Generator",
    "default_generator",
    "set_default_dtype",
    "get_default_dtype",
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "eye",
    "manual_seed",
    "seed",
    "initial_seed",
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
]


def _check_device(device, who: str) -> None:
    # Only the CPU exists; accept torch's spellings of it so ported code runs.
    if device is None:
        return
    name = getattr(device, "type", device)
    if not isinstance(name, str) or name.split(":")[0] != "cpu":
        raise OpError(f"{who}: device {device!r} is not available; pushforward runs on the CPU only ('cpu')")


class Generator:
    """A random number generator (torch's name) for rand/randn/randint's ``generator=``.

    >>> import pushforward as pf
    >>> g = pf.Generator().manual_seed(0)
    >>> a = pf.randn(2, generator=g); b = pf.randn(2, generator=pf.Generator().manual_seed(0))
    >>> bool((a == b).all())
    True
    """

    def __init__(self, device: Any = "cpu") -> None:
        _check_device(device, "Generator")
        self.device = device
        self._initial = int(np.random.SeedSequence().entropy % (2**63))
        self._rng = np.random.default_rng(self._initial)

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed (NumPy's PCG64 stream: the numbers differ from torch's for the same seed)."""
        self._initial = int(seed)
        self._rng = np.random.default_rng(self._initial)
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
        return self._initial

    def initial_seed(self) -> int:
        return self._initial

    def get_state(self) -> dict:
        return self._rng.bit_generator.state

    def set_state(self, state: dict) -> "Generator":
        self._rng.bit_generator.state = state
        return self


default_generator = Generator()


def _gen(generator: Generator | None) -> np.random.Generator:
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise OpTypeError(f"generator must be a pushforward.Generator, got {type(generator).__name__}")
    return generator._rng


# The dtype of floating tensors made from Python floats and of creation functions without
# dtype=: float64 (NumPy's rule) unless set_default_dtype changes it (torch scripts set float64
# or float32 on their first line).
_DEFAULT = [np.dtype(np.float64)]


def set_default_dtype(d: Any) -> None:
    """Set the default floating dtype (float32 or float64; float64 at start, as NumPy).

    >>> import pushforward as pf
    >>> pf.set_default_dtype(pf.float32); pf.tensor([1.0]).dtype, pf.zeros(1).dtype
    (dtype('float32'), dtype('float32'))
    >>> pf.set_default_dtype(pf.float64)
    """
    try:
        dt = np.dtype(d)
    except TypeError:
        raise OpTypeError(f"set_default_dtype: unknown dtype {d!r}") from None
    if dt not in (np.float32, np.float64):
        raise OpTypeError(f"set_default_dtype: only floating point dtypes float32 and float64 are supported (got {dt})")
    _DEFAULT[0] = dt


def get_default_dtype() -> np.dtype:
    """The default floating dtype (see set_default_dtype)."""
    return _DEFAULT[0]


def _default_complex() -> np.dtype:
    return np.dtype(np.complex64 if _DEFAULT[0] == np.float32 else np.complex128)


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise OpError(f"invalid size {tuple(size)}: sizes must be non-negative integers")
    return tuple(int(s) for s in size)


def _dt(dtype, default=None):
    if dtype is None:
        return _DEFAULT[0] if default is None else np.dtype(default)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise OpTypeError(f"unknown dtype {dtype!r}") from None


def _finish(arr: np.ndarray, requires_grad: bool, device=None) -> Tensor:
    if device is not None:
        _check_device(device, "tensor")
    t = wrap(fresh_array(arr))
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new tensor copying `data` (NumPy's dtype inference: Python floats become float64,
    or the default dtype set by set_default_dtype)."""
    _check_device(device, "tensor")
    arr = _to_array(data, dtype)
    if dtype is None and _DEFAULT[0] != np.float64 and not isinstance(data, (np.ndarray, np.generic, Tensor)):
        arr = _python_default(arr)
    return _finish(arr, requires_grad)


def _python_default(arr: np.ndarray) -> np.ndarray:
    """Floating values inferred from Python numbers in the default dtype (arrays keep theirs)."""
    if arr.dtype.kind == "f":
        return arr.astype(_DEFAULT[0], copy=False)
    if arr.dtype.kind == "c":
        return arr.astype(_default_complex(), copy=False)
    return arr


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor sharing memory with `data` when it is an ndarray of the right dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == np.dtype(dtype) else data.to(dtype)
    _check_device(device, "as_tensor")
    if is_lazy_array(data):  # a Dask array: a lazy tensor around it (core/lazy.py)
        return wrap(lazy_array(data, dtype, "as_tensor"))
    arr = np.asarray(data, dtype=None if dtype is None else np.dtype(dtype))
    if dtype is None and _DEFAULT[0] != np.float64 and not isinstance(data, (np.ndarray, np.generic)):
        arr = _python_default(arr)
    if arr.dtype.kind not in "fciub":
        raise OpTypeError(f"as_tensor(): unsupported dtype {arr.dtype}")
    return wrap(arr)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with the ndarray `arr`."""
    if not isinstance(arr, np.ndarray):
        raise OpTypeError(f"from_numpy(): expected np.ndarray (got {type(arr).__name__})")
    return as_tensor(arr)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of zeros of the given size (torch's signature; float64 unless `dtype` says otherwise).

    >>> import pushforward as pf
    >>> pf.zeros(2, 3).shape
    (2, 3)
    """
    return _finish(np.zeros(_shape(size), _dt(dtype)), requires_grad, device)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of ones of the given size.

    >>> import pushforward as pf
    >>> pf.ones(2)
    tensor([1., 1.])
    """
    return _finish(np.ones(_shape(size), _dt(dtype)), requires_grad, device)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """An uninitialised tensor of the given size (its values are whatever the memory held).

    >>> import pushforward as pf
    >>> pf.empty(2, 2).shape
    (2, 2)
    """
    return _finish(np.empty(_shape(size), _dt(dtype)), requires_grad, device)


def full(size: Any, fill_value: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor of the given size filled with `fill_value` (dtype from the value unless given).

    >>> import pushforward as pf
    >>> pf.full((2,), 7.0)
    tensor([7., 7.])
    """
    _check_device(device, "full")
    dt = np.dtype(dtype) if dtype is not None else _python_default(np.asarray(fill_value)).dtype
    return _finish(np.full(_shape((size,)), fill_value, dt), requires_grad)


def _per_batch(factory: Callable) -> Callable:
    """`*_like(x)` of a batched x (vmap, batched tangents): the factory on x's physical tensor, so
    every batch element gets its own value (zeros, or its own random draw)."""

    @functools.wraps(factory)
    def like(x, *args, **kwargs):
        if type(x) is BatchedTensor:
            return BatchedTensor(like(x._phys, *args, **kwargs), x._blevel)
        if getattr(type(x), "_interpreter", None) is not None and hasattr(x, "_like_of"):
            return like(x._like_of(), *args, **kwargs)  # an interpreted tensor: as its plain value's
        return factory(x, *args, **kwargs)

    return like


def _like(x, dtype):
    d = x._data if isinstance(x, Tensor) else np.asarray(x)
    return d, (d.dtype if dtype is None else np.dtype(dtype))


def _filled(d, dt, value, fresh: Callable) -> Any:
    """fresh() (a new C-ordered ndarray) for a C-ordered d; for another d, value laid out in memory
    as d (torch's preserve_format: a later reshape views or copies as in torch); for a lazy d a
    lazy array of value with d's chunks (NEP 18 dispatches np.full_like to Dask)."""
    if type(d) is not np.ndarray and is_lazy_array(d):
        return np.full_like(d, 0 if value is None else value, dtype=dt)
    if d.ndim < 2 or d.flags.c_contiguous:
        return fresh()
    out = empty_in_layout_of(d, dt)
    if value is not None:
        out[...] = value
    return out


@_per_batch
def zeros_like(x: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Zeros with the shape and dtype of `x` (a tensor or array-like).

    >>> import pushforward as pf
    >>> pf.zeros_like(pf.ones(2))
    tensor([0., 0.])
    """
    d, dt = _like(x, dtype)
    return _finish(_filled(d, dt, 0, lambda: np.zeros(d.shape, dt)), requires_grad, device)


@_per_batch
def ones_like(x: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Ones with the shape and dtype of `x`.

    >>> import pushforward as pf
    >>> pf.ones_like(pf.zeros(2))
    tensor([1., 1.])
    """
    d, dt = _like(x, dtype)
    return _finish(_filled(d, dt, 1, lambda: np.ones(d.shape, dt)), requires_grad, device)


@_per_batch
def empty_like(x: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """An uninitialised tensor with the shape and dtype of `x`.

    >>> import pushforward as pf
    >>> pf.empty_like(pf.zeros(3)).shape
    (3,)
    """
    d, dt = _like(x, dtype)
    return _finish(_filled(d, dt, None, lambda: np.empty(d.shape, dt)), requires_grad, device)


@_per_batch
def full_like(x: Any, fill_value: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A tensor with the shape and dtype of `x` filled with `fill_value`.

    >>> import pushforward as pf
    >>> pf.full_like(pf.zeros(2), 5.0)
    tensor([5., 5.])
    """
    d, dt = _like(x, dtype)
    return _finish(_filled(d, dt, fill_value, lambda: np.full(d.shape, fill_value, dt)), requires_grad, device)


def arange(
    start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, requires_grad: bool = False, device: Any = None
) -> Tensor:
    """Values from `start` to `end` (excluded) by `step`; `arange(n)` is 0, 1, ..., n - 1.

    >>> import pushforward as pf
    >>> pf.arange(3)
    tensor([0, 1, 2])
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise OpError("arange(): step must be nonzero")
    if dtype is None:
        return _finish(_python_default(np.arange(start, end, step)), requires_grad, device)
    return _finish(np.arange(start, end, step, dtype=np.dtype(dtype)), requires_grad, device)


def linspace(
    start: Any, end: Any, steps: int, *, dtype: Any = None, requires_grad: bool = False, device: Any = None
) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` (both included).

    >>> import pushforward as pf
    >>> pf.linspace(0.0, 1.0, 3)
    tensor([0. , 0.5, 1. ])
    """
    if steps < 0:
        raise OpError(f"linspace(): number of steps must be non-negative (got {steps})")
    return _finish(np.linspace(start, end, steps, dtype=_dt(dtype)), requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """The n x m identity matrix (m = n by default).

    >>> import pushforward as pf
    >>> pf.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad, device)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator behind rand/randn/randint; returns it (as torch)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Reseed the default generator from fresh entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    >>> import pushforward as pf
    >>> isinstance(pf.initial_seed(), int)
    True
    """
    return default_generator.initial_seed()


def rand(
    *size: Any, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False, device: Any = None
) -> Tensor:
    """Uniform random values in [0, 1) of the given size, from `generator` or the default one.

    >>> import pushforward as pf
    >>> pf.rand(2, 3).shape
    (2, 3)
    """
    _check_device(device, "rand")
    return _finish(_gen(generator).random(_shape(size)).astype(_dt(dtype), copy=False), requires_grad)


def randn(
    *size: Any, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False, device: Any = None
) -> Tensor:
    """Standard normal random values of the given size.

    >>> import pushforward as pf
    >>> pf.randn(4).shape
    (4,)
    """
    _check_device(device, "randn")
    rng = _gen(generator)
    dt = _dt(dtype)
    a = rng.standard_normal(_shape(size))
    if dt.kind == "c":
        a = (a + 1j * rng.standard_normal(_shape(size))) / np.sqrt(2)
    return _finish(a.astype(dt, copy=False), requires_grad)


def randint(
    low: int,
    high: int | None = None,
    size: Any = (),
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """Random integers in [low, high) (or [0, low) when `high` is None) of the given size.

    >>> import pushforward as pf
    >>> bool(((pf.randint(0, 3, (5,)) >= 0) & (pf.randint(0, 3, (5,)) < 3)).all())
    True
    """
    _check_device(device, "randint")
    if high is None:
        low, high = 0, low
    return wrap(_gen(generator).integers(low, high, _shape((size,))).astype(_dt(dtype, np.int64)))


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A random permutation of 0..n-1 (int64)."""
    _check_device(device, "randperm")
    return wrap(_gen(generator).permutation(int(n)).astype(_dt(dtype, np.int64)))


@_per_batch
def rand_like(x: Any, *, dtype: Any = None) -> Tensor:
    """Uniform random values in [0, 1) with the shape and dtype of `x`.

    >>> import pushforward as pf
    >>> pf.rand_like(pf.zeros(2, 2)).shape
    (2, 2)
    """
    d, dt = _like(x, dtype)
    return wrap(_gen(None).random(d.shape).astype(dt))


@_per_batch
def randn_like(x: Any, *, dtype: Any = None) -> Tensor:
    """Standard normal random values with the shape and dtype of `x`.

    >>> import pushforward as pf
    >>> pf.randn_like(pf.zeros(3)).shape
    (3,)
    """
    d, dt = _like(x, dtype)
    return randn(*d.shape, dtype=dt)
