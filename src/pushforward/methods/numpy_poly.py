"""NumPy's 1-D signal and polynomial functions over pushforward ops: convolve, correlate, interp,
polyval, polyadd/polysub/polymul/polyder/polyint, vander, unwrap, logspace, geomspace.

>>> import pushforward as pf
>>> convolve(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
tensor([1., 3., 2.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpValueError
from ..ops import generated as ops
from .numpy_math import linspace
from .numpy_values import as_t

__all__ = [
    "convolve",
    "correlate",
    "interp",
    "polyval",
    "polyadd",
    "polysub",
    "polymul",
    "polyder",
    "polyint",
    "vander",
    "unwrap",
    "logspace",
    "geomspace",
]


def _floating(x: Tensor) -> Tensor:
    return x if x.dtype.kind in "fc" else x.to(np.dtype(np.float64))


def _full(a: Tensor, v: Tensor) -> Tensor:
    n = v.shape[0]
    out = None
    for k in range(n):
        parts = [p for p in (ops.zeros(k, dtype=a.dtype), a * v[k], ops.zeros(n - 1 - k, dtype=a.dtype)) if p.shape[0]]
        term = ops.cat(parts, 0) if len(parts) > 1 else parts[0]
        out = term if out is None else out + term
    return out


def convolve(a: Any, v: Any, mode: str = "full") -> Tensor:
    """NumPy's 1-D convolve ('full', 'same': the longer input's length, 'valid')."""
    a, v = _floating(as_t(a)), _floating(as_t(v))
    if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
        raise OpValueError(
            f"np.convolve: inputs must be non-empty 1-D arrays, got shapes {tuple(a.shape)}, {tuple(v.shape)}"
        )
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    full = _full(a, v)
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    if mode == "same":
        return ops.narrow(full, 0, (m - 1) // 2, n)
    if mode == "valid":
        return ops.narrow(full, 0, m - 1, n - m + 1)
    raise OpValueError(f"np.convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


def correlate(a: Any, v: Any, mode: str = "valid") -> Tensor:
    """NumPy's 1-D correlate: sum_n a[n + k] conj(v[n])."""
    a, v = _floating(as_t(a)), _floating(as_t(v))
    vr = ops.conj(v).flip((0,)) if v.is_complex() else v.flip((0,))
    return convolve(a, vr, mode)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Tensor:
    """NumPy's piecewise-linear interpolation; differentiable in x and fp (xp's knots are constants)."""
    if period is not None:
        raise OpValueError("np.interp: period is not supported on pushforward tensors")
    x, fp = _floating(as_t(x)), _floating(as_t(fp))
    knots = np.asarray(xp.detach().numpy() if isinstance(xp, Tensor) else xp, dtype=np.float64)
    xv = x.detach().numpy()
    i = np.clip(np.searchsorted(knots, xv, side="right") - 1, 0, len(knots) - 2)
    idx = creation.tensor(i)
    x0, x1 = creation.tensor(knots[i]), creation.tensor(knots[i + 1])
    f0, f1 = (
        ops.index_select(fp, 0, idx.reshape(-1)).reshape(*i.shape),
        ops.index_select(fp, 0, (idx + 1).reshape(-1)).reshape(*i.shape),
    )
    y = f0 + (f1 - f0) * (x - x0) / (x1 - x0)
    lo = fp[0] if left is None else as_t(left) + 0 * fp[0]
    hi = fp[-1] if right is None else as_t(right) + 0 * fp[-1]
    y = ops.where(ops.lt(x, float(knots[0])), lo + 0 * y, y)
    return ops.where(ops.gt(x, float(knots[-1])), hi + 0 * y, y)


def polyval(p: Any, x: Any) -> Tensor:
    """NumPy's polyval (Horner's rule, highest power first)."""
    p, x = _floating(as_t(p)), _floating(as_t(x))
    y = p[0] + 0 * x
    for k in range(1, p.shape[0]):
        y = y * x + p[k]
    return y


def _aligned(a: Tensor, b: Tensor) -> tuple:
    n = max(a.shape[0], b.shape[0])
    pad = lambda t: ops.cat([ops.zeros(n - t.shape[0], dtype=t.dtype), t], 0) if t.shape[0] < n else t  # noqa: E731
    return pad(a), pad(b)


def polyadd(a1: Any, a2: Any) -> Tensor:
    """NumPy's polyadd."""
    a, b = _aligned(_floating(as_t(a1)), _floating(as_t(a2)))
    return a + b


def polysub(a1: Any, a2: Any) -> Tensor:
    """NumPy's polysub."""
    a, b = _aligned(_floating(as_t(a1)), _floating(as_t(a2)))
    return a - b


def polymul(a1: Any, a2: Any) -> Tensor:
    """NumPy's polymul: the convolution of the coefficients."""
    return convolve(a1, a2)


def polyder(p: Any, m: int = 1) -> Tensor:
    """NumPy's polyder: the m-th derivative's coefficients."""
    c = _floating(as_t(p))
    for _ in range(m):
        n = c.shape[0] - 1
        if n <= 0:
            return ops.zeros(1, dtype=c.dtype) * c.sum()
        c = c[:-1] * creation.tensor(np.arange(n, 0, -1, dtype=np.float64))
    return c


def polyint(p: Any, m: int = 1, k: Any = None) -> Tensor:
    """NumPy's polyint: the m-th antiderivative (integration constants k, default 0)."""
    c = _floating(as_t(p))
    ks = np.zeros(m) if k is None else np.atleast_1d(np.asarray(k, dtype=np.float64))
    if ks.size == 1 and m > 1:
        ks = np.full(m, ks[0])
    for j in range(m):
        n = c.shape[0]
        c = ops.cat([c / creation.tensor(np.arange(n, 0, -1, dtype=np.float64)), c[:1] * 0 + float(ks[j])], 0)
    return c


def vander(x: Any, N: Any = None, increasing: bool = False) -> Tensor:
    """NumPy's Vandermonde matrix."""
    return ops.vander(as_t(x), N, increasing)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * np.pi) -> Tensor:
    """NumPy's unwrap: the jumps it removes are multiples of period, constants to the derivative."""
    x = _floating(as_t(p))
    v = x.detach().numpy()
    return x + creation.tensor(np.unwrap(v, discont, axis, period=period) - v)


def logspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None, axis: int = 0
) -> Tensor:
    """NumPy's logspace: base ** linspace(start, stop)."""
    r = ops.pow(_floating(as_t(base)), linspace(start, stop, num, endpoint, axis=axis))
    return r if dtype is None else r.to(np.dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0) -> Tensor:
    """NumPy's geomspace (positive endpoints): exp of a linspace of logs, exact at the endpoints."""
    s, e = _floating(as_t(start)), _floating(as_t(stop))
    r = ops.exp(linspace(ops.log(s), ops.log(e), num, endpoint, axis=axis))
    if num > 0:
        r = (
            ops.cat([s.unsqueeze(0) + 0 * ops.narrow(r, 0, 0, 1), ops.narrow(r, 0, 1, r.shape[0] - 1)], 0)
            if axis == 0
            else r
        )
    return r if dtype is None else r.to(np.dtype(dtype))
