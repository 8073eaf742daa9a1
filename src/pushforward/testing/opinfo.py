"""The op database's building blocks: `OpInfo` (one entry), `SampleInput` (one call), the tensor
factory the sample generators use, and the small helpers shared by opdb.py, opdb_nn.py and
opdb_linalg.py (kept apart so those modules import this one, not each other).

>>> import numpy as np
>>> t = make_tensor(np.random.default_rng(0), (2, 3), F64)
>>> t.shape, t.dtype
((2, 3), dtype('float64'))
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..ops import generated as ops
from ..core.tensor import Tensor, wrap

__all__ = [
    "F64",
    "F32",
    "C128",
    "I64",
    "BOOL",
    "REAL",
    "REAL_COMPLEX",
    "SampleInput",
    "make_tensor",
    "OpInfo",
    "op_record",
    "UNARY_SHAPES",
]

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)
C128 = np.dtype(np.complex128)
I64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
REAL = (F64, F32)
REAL_COMPLEX = (F64, F32, C128)


@dataclass
class SampleInput:
    """One call `op(input, *args, **kwargs)`. Floating/complex Tensors anywhere in it (also inside
    lists) are the differentiable inputs. `grad=False`: skip derivative checks on this sample
    (e.g. at a point where the op is not differentiable); `gradgrad=False`: skip second-order ones."""

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    grad: bool = True
    gradgrad: bool = True  # False at points where second derivatives do not exist (ties, 0 ** x)

    def __repr__(self) -> str:
        def show(v):
            if isinstance(v, Tensor):
                return f"T{tuple(v.shape)}:{v.dtype}"
            if isinstance(v, (list, tuple)):
                inner = ", ".join(show(x) for x in v)
                return f"[{inner}]" if isinstance(v, list) else f"({inner})"
            if isinstance(v, np.ndarray):
                return f"array{v.shape}"
            return repr(v)

        parts = [show(self.input)] + [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"{self.name or 'sample'}({', '.join(parts)})"


def make_tensor(
    rng: np.random.Generator,
    shape: Any,
    dtype: Any,
    low: float = -2.0,
    high: float = 2.0,
    avoid_zero: bool = True,
    contiguous: bool = True,
) -> Tensor:
    """A fresh leaf Tensor of `shape` and `dtype` with values in [low, high].

    Real values stay at least 0.1 away from 0 when the interval straddles it (kinks of abs,
    relu, sign, ... sit there). Complex values have real and imaginary parts of modulus in
    [0.2, 0.8] (away from every branch cut of the elementary functions) unless low/high are
    given as complex bounds.
    """
    shape = tuple(shape)
    dt = np.dtype(dtype)
    if not contiguous and len(shape) >= 2:
        rev = shape[::-1]
        return wrap(np.asarray(make_tensor(rng, rev, dt, low, high, avoid_zero)._data).T)
    if dt.kind == "c":

        def part():
            return rng.uniform(0.2, 0.8, shape) * rng.choice([-1.0, 1.0], shape)

        arr = (part() + 1j * part()).astype(dt)
    elif dt.kind == "f":
        a = rng.uniform(low, high, shape)
        if avoid_zero and low < -0.2 and high > 0.2:
            small = np.abs(a) < 0.1
            a = np.where(small, a + np.where(a >= 0, 0.1, -0.1), a)
        arr = np.asarray(a, dtype=dt)
    elif dt.kind == "b":
        arr = rng.random(shape) < 0.5
    else:
        arr = rng.integers(int(low) if low > -5 else -5, int(high) + 1 if high < 5 else 5, shape).astype(dt)
    return _leaf(np.asarray(arr))


def _leaf(arr: np.ndarray) -> Tensor:
    return wrap(np.array(arr, copy=True))


class _Maker:
    """Bound tensor factory for one sample set: `m(shape)` in the op's domain and dtype."""

    def __init__(self, info: "OpInfo", dtype) -> None:
        self.info = info
        self.dtype = np.dtype(dtype)
        self.rng = np.random.default_rng(zlib.crc32(info.name.encode()))

    def __call__(self, shape=(), dtype=None, low=None, high=None, contiguous=True) -> Tensor:
        dt = self.dtype if dtype is None else np.dtype(dtype)
        lo, hi = self.info.domain if self.info.domain is not None else (-2.0, 2.0)
        lo = lo if low is None else low
        hi = hi if high is None else high
        return make_tensor(self.rng, shape, dt, lo, hi, contiguous=contiguous)

    def tensor(self, values, dtype=None) -> Tensor:
        return _leaf(np.asarray(values, dtype=self.dtype if dtype is None else dtype))

    def index(self, high, shape) -> Tensor:
        return _leaf(self.rng.integers(0, high, shape).astype(np.int64))

    def mask(self, shape) -> Tensor:
        return _leaf(self.rng.random(shape) < 0.5)


@dataclass
class OpInfo:
    """Everything the generic tests need to know about one op.

    name: the derivatives.yaml name. op: callable as op(input, *args, **kwargs).
    sample_fn(make) -> list[SampleInput], where make is a `_Maker` for the requested dtype.
    ref: NumPy/SciPy reference over ndarrays with the same call structure (None: no reference).
    dtypes: dtypes the op supports (complex128 listed when complex inputs are supported).
    domain: (low, high) for real samples of ops with a restricted domain.
    inplace: name of the in-place Tensor method (`sin_`), None when there is none.
    is_view: True, False or "maybe" (a view when NumPy can make one).
    differentiable: False for comparisons etc.
    composite: True for ops defined by composition (derivatives come from their parts).
    """

    name: str
    op: Callable
    sample_fn: Callable
    ref: Callable | None = None
    dtypes: tuple = REAL
    domain: tuple | None = None
    inplace: str | None = None
    is_view: bool | str = False
    differentiable: bool = True
    composite: bool = False
    fast_mode: bool = False  # gradchecks in fast_mode (big Jacobians)
    gradgrad: bool = True  # run gradgradcheck (forward-over-reverse)
    atol: float = 1e-5
    rtol: float = 1e-3
    ref_rtol: float = 1e-7
    notes: str = ""

    @property
    def supports_complex(self) -> bool:
        return C128 in self.dtypes

    @property
    def jvp_kind(self) -> str:
        if self.composite:
            return "composite"
        rec = op_record(self.name)
        return rec.jvp_kind if rec is not None else "none"

    def samples(self, dtype: Any = F64) -> list:
        """Fresh sample inputs (new tensors on every call, same values: seeded by the name)."""
        dt = np.dtype(dtype)
        if dt not in self.dtypes:
            return []
        return list(self.sample_fn(_Maker(self, dt)))

    def __call__(self, sample: SampleInput):
        return self.op(sample.input, *sample.args, **sample.kwargs)

    def reference(self, sample: SampleInput) -> Any:
        if self.ref is None:
            return None
        conv = _map(
            lambda t: np.array(t._data, copy=True),
            (sample.input, sample.args, sample.kwargs),
            lambda v: isinstance(v, Tensor),
        )
        inp, args, kwargs = conv
        return self.ref(inp, *args, **kwargs)


def op_record(name: str) -> Any:
    """The generated `Op` record of a (non-composite) op, or None."""
    rec = getattr(ops, name.upper(), None)
    if rec is None or getattr(rec, "name", None) != name:
        return None
    return rec


def _map(fn, obj, pred):
    if pred(obj):
        return fn(obj)
    if isinstance(obj, list):
        return [_map(fn, v, pred) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_map(fn, v, pred) for v in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v, pred) for k, v in obj.items()}
    return obj


UNARY_SHAPES = ((), (4,), (2, 3), (0, 2))


def _unary(m, args=(), kwargs=None):
    kwargs = kwargs or {}
    out = [SampleInput(m(s), args, dict(kwargs), f"shape{s}") for s in UNARY_SHAPES]
    out.append(SampleInput(m((2, 3), contiguous=False), args, dict(kwargs), "non-contiguous"))
    return out


BINARY_SHAPES = (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,)), ((3,), ()), ((0, 3), (3,)))


def _binary(m, rhs=None, scalars=(2.5,), lhs_scalars=(), kwargs=None):
    """Pairs of same, broadcasting, 0-d and empty shapes; a Python scalar on either side."""
    kwargs = kwargs or {}
    rhs = rhs or {}
    out = [SampleInput(m(a), (m(b, **rhs),), dict(kwargs), f"{a}x{b}") for a, b in BINARY_SHAPES]
    out += [SampleInput(m((2, 3)), (s,), dict(kwargs), f"tensor x scalar {s}") for s in scalars]
    out += [SampleInput(s, (m((3,), **rhs),), dict(kwargs), f"scalar {s} x tensor") for s in lhs_scalars]
    return out


def _fn(name):
    return getattr(ops, name)


def _method(name):
    def call(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)

    call.__name__ = name
    return call
