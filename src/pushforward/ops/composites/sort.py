"""Sorting-based composites and the derivative helpers of logcumsumexp.

Values that an order statistic picks (median, quantile, mode, cummax, ...) are gathered from
the input with indices computed once, so gradients flow to the chosen elements only (torch's
rule) and both derivative modes come from gather.

>>> import pushforward as pf
>>> float(pf.median(pf.tensor([3.0, 1.0, 2.0, 4.0])))  # the lower median, as torch
2.0
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .util import check_dim
from .util import const
from .util import ops as _ops
from ...errors import OpError
from ...kernels import basic as K
from ...core.tensor import Tensor
from ...dispatch.batching import loop_batched

__all__ = [
    "c_median",
    "c_quantile",
    "c_mode",
    "c_cum_extremum",
    "c_nanmean",
    "c_diff",
    "c_aminmax",
    "c_var_mean",
    "c_std_mean",
    "logcumsumexp_backward",
    "logcumsumexp_jvp",
]

_values_indices = {
    name: namedtuple(name, ["values", "indices"]) for name in ("median", "nanmedian", "mode", "cummax", "cummin")
}
_aminmax = namedtuple("aminmax", ["min", "max"])


def _idx(arr):
    return const(arr, np.int64)


def _pick_sorted(x, d, positions):
    """Values and original indices of the sorted order at `positions` (int array, x's shape with dim d
    of size k), gathered from x itself so derivatives reach the picked elements."""
    o = _ops()
    _, order = o.sort(x, d)
    src = np.take_along_axis(np.asarray(order._data), positions, d)
    return x.gather(d, _idx(src)), src


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_median(self, dim=None, keepdim=False, ignore_nan=False):
    """torch.median / nanmedian: the lower median; NaN propagates (median) or is skipped (nanmedian)."""
    name = "nanmedian" if ignore_nan else "median"
    x = self
    if dim is None:
        if x.numel() == 0:
            raise OpError(f"{name}(): expected a non-empty tensor")
        flat = x.reshape(-1)
        v, _ = _median_along(flat.unsqueeze(0), 1, ignore_nan)
        return v.reshape(())
    if x.ndim == 0:
        return _values_indices[name](x.clone(), _idx(np.zeros((), np.int64)))
    d = check_dim(dim, x.ndim, name)
    if x.shape[d] == 0:
        raise OpError(f"{name}(): cannot reduce an empty dimension {d} (shape {tuple(x.shape)})")
    v, i = _median_along(x, d, ignore_nan)
    if not keepdim:
        v, i = v.squeeze(d), np.squeeze(i, d)
    # (a reduction's results are contiguous in torch, whatever the input's layout: a later .view works)
    return _values_indices[name](v.contiguous(), _idx(i if i.flags.c_contiguous else i.copy()))


def _median_along(x, d, ignore_nan):
    data = np.asarray(x._data)
    nan = np.isnan(data) if data.dtype.kind in "fc" else np.zeros(data.shape, bool)
    valid = (~nan).sum(d, keepdims=True)
    n = data.shape[d]
    if ignore_nan:
        pos = np.where(valid > 0, (valid - 1) // 2, 0)
    else:  # NaN sorts last: a row with NaN picks its first NaN
        pos = np.where(valid < n, valid, (n - 1) // 2)
    return _pick_sorted(x, d, pos.astype(np.int64))


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_quantile(self, q, dim=None, keepdim=False, interpolation="linear", ignore_nan=False):
    """torch.quantile / nanquantile with the interpolation modes linear, lower, higher, midpoint, nearest."""
    o = _ops()
    name = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise OpError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {interpolation!r}"
        )
    qs = np.asarray(q._data if isinstance(q, Tensor) else q, dtype=np.float64)
    if qs.ndim > 1:
        raise OpError(f"{name}() q must be a scalar or 1D tensor, got shape {qs.shape}")
    if ((qs < 0) | (qs > 1)).any():
        raise OpError(f"{name}() q values must be in the range [0, 1], got {qs.tolist()}")
    x = self
    if self.numel() == 0:
        raise OpError(f"{name}() input tensor must be non-empty")
    if dim is None:
        x = x.reshape(-1)
        d = 0
    else:
        d = check_dim(dim, x.ndim, name)
        if x.ndim == 0:
            x = x.reshape(1)
    xl = x.movedim(d, -1)
    data = np.asarray(xl._data)
    nan = np.isnan(data)
    valid = (~nan).sum(-1, keepdims=True)  # (..., 1)
    n = data.shape[-1]
    count = valid if ignore_nan else np.full_like(valid, n)
    qv = qs.reshape(-1)
    pos = qv * np.maximum(count - 1, 0)  # (..., Q)
    lo = np.floor(pos).astype(np.int64)
    hi = np.ceil(pos).astype(np.int64)
    if interpolation == "nearest":
        lo = hi = np.round(pos).astype(np.int64)  # half to even, as torch
    vals_sorted, _ = o.sort(xl, -1)
    vlo = vals_sorted.gather(-1, _idx(lo))
    if interpolation == "lower":
        res = vlo
    else:
        vhi = vals_sorted.gather(-1, _idx(hi))
        if interpolation in ("higher", "nearest"):
            res = vhi
        elif interpolation == "midpoint":
            res = (vlo + vhi) * 0.5
        else:
            w = const(pos - lo, x.dtype)
            res = vlo + w * (vhi - vlo)
    bad = (valid == 0) if ignore_nan else (valid < n)
    if bad.any():  # all-NaN rows (nanquantile) or rows with NaN (quantile) give NaN
        res = o.where(const(np.broadcast_to(bad, tuple(res.shape)), np.bool_), float("nan"), res)
    # (..., Q) -> (Q, ...) with the reduced dim kept or dropped
    res = res.movedim(-1, 0)
    if keepdim:
        if dim is None:
            res = res.reshape((res.shape[0],) + (1,) * self.ndim)
        elif self.ndim:
            res = res.unsqueeze(d + 1)
    if qs.ndim == 0:
        res = res.squeeze(0)
    return res.contiguous()  # (as torch's, whatever the input's layout)


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_mode(self, dim=-1, keepdim=False):
    if self.ndim == 0:
        return _values_indices["mode"](self.clone(), _idx(np.zeros((), np.int64)))
    d = check_dim(dim, self.ndim, "mode")
    i = K.mode_indices(np.asarray(self._data), d, keepdim=True)
    v = self.gather(d, _idx(i))
    if not keepdim:
        v, i = v.squeeze(d), np.squeeze(i, d)
    return _values_indices["mode"](v, _idx(i))


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_cum_extremum(self, dim, largest):
    name = "cummax" if largest else "cummin"
    i = K.cum_extremum_indices(np.asarray(self._data), dim, largest)
    if self.ndim == 0:
        return _values_indices[name](self.clone(), _idx(i))
    return _values_indices[name](self.gather(dim, _idx(i)), _idx(i))


def c_nanmean(self, dim=None, keepdim=False):
    o = _ops()
    nan = o.isnan(self)
    return o.where(nan, 0.0, self).sum(dim, keepdim) / o.logical_not(nan).sum(dim, keepdim).to(self.dtype)


def c_diff(self, n=1, dim=-1, prepend=None, append=None):
    o = _ops()
    if self.ndim == 0:
        raise OpError("diff expects input to be at least one-dimensional")
    d = check_dim(dim, self.ndim, "diff")
    x = self
    parts = (
        [p if p.ndim else p.expand(_with(self.shape, d, 1)) for p in (prepend, x, append) if p is not None]
        if (prepend is not None or append is not None)
        else [x]
    )
    x = o.cat(parts, d) if len(parts) > 1 else x
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        x = x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1)
    return x


def _with(shape, d, size):
    s = list(shape)
    s[d] = size
    return tuple(s)


def c_aminmax(self, dim=None, keepdim=False):
    o = _ops()
    dims = () if dim is None else dim
    if dim is None and keepdim:
        dims = tuple(range(self.ndim))
    return _aminmax(o.amin(self, dims, keepdim), o.amax(self, dims, keepdim))


def c_var_mean(self, dim=None, correction=1, keepdim=False):
    o = _ops()
    return o.var(self, dim, correction=correction, keepdim=keepdim), o.mean(self, dim, keepdim)


def c_std_mean(self, dim=None, correction=1, keepdim=False):
    o = _ops()
    return o.std(self, dim, correction=correction, keepdim=keepdim), o.mean(self, dim, keepdim)


# -- logcumsumexp derivatives: exp(x_i - out_j) for i <= j, scaled by the row maximum (a constant
#    that cancels) so no exp overflows
def _shift(x, dim):
    return x.detach().amax(dim, keepdim=True) if x.numel() else x.detach()


def logcumsumexp_backward(grad, self, result, dim):
    if self.ndim == 0:
        return grad
    m = _shift(self, dim)
    return (grad * (m - result).exp()).flip([dim]).cumsum(dim).flip([dim]) * (self - m).exp()


def logcumsumexp_jvp(self_p, self_t, result, dim):
    if self_p.ndim == 0:
        return self_t
    m = _shift(self_p, dim)
    return (self_t * (self_p - m).exp()).cumsum(dim) * (m - result).exp()
