"""Composite numeric ops NumPy and torch share: float_power, fabs, trapezoid.

Each is built from differentiable ops of derivatives.yaml, so its derivatives (and higher ones)
come from its parts; derivatives.yaml declares the public op (`composite: c_float_power(...)`).
Values and dtypes are NumPy's: float_power computes in float64 (complex128 for complex operands),
as NumPy and torch both do; fabs refuses complex numbers, as NumPy does.

>>> import pushforward as pf
>>> pf.float_power(pf.tensor([2, 3]), 2)
tensor([4., 9.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.creation import as_tensor
from ...core.tensor import Tensor
from ...errors import OpTypeError, check_dim
from .util import ops as _ops

__all__ = ["c_float_power", "c_fabs", "c_trapezoid"]


def _is_complex(v: Any) -> bool:
    return v.dtype.kind == "c" if isinstance(v, Tensor) else isinstance(v, complex)


def _widened(v: Any, dtype: np.dtype) -> Any:
    if isinstance(v, Tensor):
        return v if v.dtype == dtype else v.to(dtype)
    return v  # a Python number is weak: the tensor operand sets the dtype


def c_float_power(self: Any, exponent: Any) -> Tensor:
    """self ** exponent computed in float64, or complex128 when either operand is complex."""
    if not isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        self = as_tensor(self)
    wide = np.dtype(np.complex128 if _is_complex(self) or _is_complex(exponent) else np.float64)
    if not isinstance(self, Tensor):  # a number base: the exponent tensor carries the dtype
        self = as_tensor(np.asarray(self, dtype=wide))
    return _ops().pow(_widened(self, wide), _widened(exponent, wide))


def c_fabs(self: Tensor) -> Tensor:
    """The absolute value of a real tensor, in a floating dtype (integers and booleans in the
    smallest one holding them, float16 for booleans and bytes: NumPy's loops)."""
    if self.dtype.kind == "c":
        raise OpTypeError(f"fabs: complex numbers are not supported (got dtype {self.dtype}); abs gives their modulus")
    return _ops().abs(self if self.dtype.kind == "f" else self.to(np.promote_types(self.dtype, np.float16)))


def c_trapezoid(y: Tensor, x: Tensor | None, dx: Any, dim: int) -> Tensor:
    """The trapezoid rule along dim: sample spacing dx (1 when None), or the sample points x (1-d
    along dim, or of y's shape)."""
    o = _ops()
    if x is not None and dx is not None:
        raise OpTypeError("trapezoid: pass either x or dx, not both")
    y = y if y.dtype.kind in "fc" else y.to(np.dtype(np.float64))
    d = check_dim(dim, y.ndim, "trapezoid")
    n = y.shape[d]
    pairs = o.narrow(y, d, min(1, n), max(n - 1, 0)) + o.narrow(y, d, 0, max(n - 1, 0))
    if x is None:
        return o.sum(pairs, d) * ((1.0 if dx is None else dx) / 2.0)
    x = x if isinstance(x, Tensor) else as_tensor(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise OpTypeError(f"trapezoid: x has {x.shape[0]} points, y has {n} along dim {dim}")
        steps = o.narrow(x, 0, min(1, n), max(n - 1, 0)) - o.narrow(x, 0, 0, max(n - 1, 0))
        steps = steps.reshape(*[-1 if k == d else 1 for k in range(y.ndim)])
    else:
        xd = check_dim(dim, x.ndim, "trapezoid")
        steps = o.narrow(x, xd, min(1, n), max(n - 1, 0)) - o.narrow(x, xd, 0, max(n - 1, 0))
    return o.sum(pairs * steps, d) / 2.0
