"""NumPy's order statistics and nan-aware reductions over pushforward ops (NumPy semantics).

median, quantile and percentile (NumPy's default 'linear' method) sort and interpolate, so their
derivatives select the order statistics; the nan* reductions mask nan out.

>>> import pushforward as pf
>>> median(pf.tensor([3.0, 1.0, 2.0, 10.0]))
tensor(2.5)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._values import along, as_t, floating as _floating, public_functions, reduced
from ._writes import on_values


def _axes(x: Tensor, axis: Any) -> tuple[Tensor, int, tuple]:
    """x with the reduced axes merged into one last axis; that axis; the axes reduced (for keepdims)."""
    if axis is None:
        return x.reshape(-1), 0, tuple(range(x.ndim))
    axes = tuple(int(a) % x.ndim for a in np.atleast_1d(axis))
    keep = [i for i in range(x.ndim) if i not in axes]
    y = x.permute(*keep, *axes).reshape(*[x.shape[i] for i in keep], -1)
    return y, y.ndim - 1, axes


def _keepdims(r: Tensor, x: Tensor, axes: tuple, keepdims: bool, lead: int = 0) -> Tensor:
    if not keepdims:
        return r
    shape = list(r.shape[:lead]) + [1 if i in axes else s for i, s in enumerate(x.shape)]
    return r.reshape(*shape)


def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Tensor:
    """NumPy's quantile with the 'linear' method: q in [0, 1] (a scalar or an array of them)."""
    if method != "linear" or weights is not None or out is not None:
        raise OpTypeError(f"np.quantile: method={method!r}, weights and out are not supported on pushforward tensors")
    x = _floating(as_t(a))
    qs = np.asarray(q.detach().numpy() if isinstance(q, Tensor) else q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise OpValueError("np.quantile: quantiles must be in the range [0, 1]")
    y, ax, axes = _axes(x, axis)
    s = ops.sort(y, ax)[0]
    n = s.shape[ax]
    pos = qs.reshape(-1) * (n - 1)
    lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
    frac = creation.tensor(pos - lo).to(s.dtype)
    lo_v = ops.index_select(s, ax, creation.tensor(lo))
    hi_v = ops.index_select(s, ax, creation.tensor(hi))
    r = lo_v + (hi_v - lo_v) * frac
    r = ops.movedim(r, ax, 0).reshape(*qs.shape, *r.shape[:ax])
    return _keepdims(r, x, axes, keepdims, qs.ndim) if keepdims else r


def percentile(a: Any, q: Any, *args: Any, **kwargs: Any) -> Tensor:
    """NumPy's percentile: quantile of q / 100 (quantile's arguments)."""
    qs = np.asarray(q.detach().numpy() if isinstance(q, Tensor) else q, dtype=np.float64) / 100.0
    return quantile(a, qs, *args, **kwargs)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Tensor:
    """NumPy's median: the mean of the two middle values for an even count."""
    return quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def _masked(a: Any, fill: float) -> Tensor:
    x = _floating(as_t(a))
    return ops.where(ops.isnan(x), creation.full_like(x, fill), x)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tensor:
    """NumPy's nanmax: the maximum ignoring nan."""
    return reduced(ops.amax, _masked(a, -np.inf), axis, keepdims)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Tensor:
    """NumPy's nanmin: the minimum ignoring nan."""
    return reduced(ops.amin, _masked(a, np.inf), axis, keepdims)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any):
    """NumPy's nanprod: nan counted as one."""
    x = _masked(a, 1.0)
    if axis is None:
        r = ops.prod(x.reshape(-1), 0)
        return r.reshape(*([1] * x.ndim)) if keepdims else r
    return ops.prod(x, int(axis), keepdims)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor:
    """NumPy's nancumsum: nan counted as zero."""
    x = _masked(a, 0.0)
    return ops.cumsum(*along(x, axis))


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor:
    """NumPy's nancumprod: nan counted as one."""
    x = _masked(a, 1.0)
    return ops.cumprod(*along(x, axis))


def nanvar(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, **kw: Any
) -> Tensor:
    """NumPy's nanvar: the variance of the values that are not nan."""
    x = _floating(as_t(a))
    ok = ops.logical_not(ops.isnan(x)).to(x.dtype)
    xz = _masked(x, 0.0)
    n = reduced(ops.sum, ok, axis, True)
    mean = reduced(ops.sum, xz, axis, True) / n
    dev = (xz - mean) * ok
    sq = dev * ops.conj(dev) if x.is_complex() else dev * dev
    r = reduced(ops.sum, sq, axis, keepdims) / (reduced(ops.sum, ok, axis, keepdims) - ddof)
    return r.real if x.is_complex() else r


def nanstd(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, **kw: Any
) -> Tensor:
    """NumPy's nanstd: the square root of nanvar."""
    return ops.sqrt(nanvar(a, axis, ddof=ddof, keepdims=keepdims))


def _nan_error(name: str) -> OpTypeError:
    return OpTypeError(
        f"np.{name} of a tensor holding nan is not supported (its ragged selection); "
        f"use np.{name[3:]} on the values that are not nan"
    )


def _nan_unsupported(name: str):
    def f(*args: Any, **kwargs: Any) -> Tensor:
        x = as_t(args[0])
        if bool(np.any(np.isnan(x.detach().numpy()))):  # (without a derivative: NumPy's values)
            return on_values(getattr(np, name), f"np.{name}", args, kwargs, lambda: _nan_error(name))
        return {"nanmedian": median, "nanquantile": quantile, "nanpercentile": percentile}[name](*args, **kwargs)

    f.__name__ = name
    return f


nanmedian = _nan_unsupported("nanmedian")
nanquantile = _nan_unsupported("nanquantile")
nanpercentile = _nan_unsupported("nanpercentile")


__all__ = public_functions(globals())
