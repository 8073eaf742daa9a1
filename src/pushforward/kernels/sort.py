"""NumPy kernels for sorting ops: sort, topk, kthvalue, logcumsumexp, and the index
computations of cummax/cummin and mode. Re-exported by kernels/basic.py (as K.sort, ...).

Tie rules follow torch: sort is stable (equal values keep their order, also when descending),
NaN counts as the largest value; cummax/cummin pick the latest index of a tie; mode the
smallest most frequent value and its last index.
"""

from __future__ import annotations

from ..core.backend import xp
from ..errors import check_dim
from ..errors import OpError

__all__ = ["sort", "topk", "kthvalue", "logcumsumexp", "cum_extremum_indices", "mode_indices"]


def _argsort(a, d: int, descending: bool):
    if not descending:
        return xp.argsort(a, axis=d, kind="stable")
    # stable and descending: sort the reversed array, reverse the order back, map the indices
    n = a.shape[d]
    return n - 1 - xp.flip(xp.argsort(xp.flip(a, d), axis=d, kind="stable"), d)


def sort(a, dim=-1, descending=False, stable=False):
    d = check_dim(dim, a.ndim, "sort")
    if a.ndim == 0:
        return a.copy(), xp.zeros((), xp.int64)
    if a.dtype.kind == "c":
        raise OpError(f"sort: complex tensors can't be sorted (got dtype {a.dtype})")
    idx = _argsort(a, d, descending)
    return xp.take_along_axis(a, idx, d), idx.astype(xp.int64)


def topk(a, k, dim=-1, largest=True, sorted=True):
    d = check_dim(dim, a.ndim, "topk")
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise OpError(f"topk: k ({k}) is out of range for dimension {d} of size {n} (shape {a.shape})")
    if a.ndim == 0:
        return a.copy(), xp.zeros((), xp.int64)
    vals, idx = sort(a, d, descending=largest)
    sl = [slice(None)] * a.ndim
    sl[d] = slice(0, k)
    return vals[tuple(sl)].copy(), idx[tuple(sl)].copy()


def kthvalue(a, k, dim=-1, keepdim=False):
    d = check_dim(dim, a.ndim, "kthvalue")
    n = a.shape[d] if a.ndim else 1
    if not 1 <= k <= n:
        raise OpError(f"kthvalue: k ({k}) is out of range for dimension {d} of size {n} (shape {a.shape})")
    if a.ndim == 0:
        return a.copy(), xp.zeros((), xp.int64)
    vals, idx = sort(a, d)
    sl = [slice(None)] * a.ndim
    sl[d] = slice(k - 1, k)
    v, i = vals[tuple(sl)], idx[tuple(sl)]
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return v.copy(), i.copy()


def logcumsumexp(a, dim):
    d = check_dim(dim, a.ndim, "logcumsumexp")
    if a.ndim == 0:
        return a.copy()
    if a.dtype.kind not in "f":
        raise OpError(f"logcumsumexp: expected a floating tensor, got dtype {a.dtype}")
    r = xp.logaddexp.accumulate(a, axis=d)
    return r if r.flags.c_contiguous else xp.ascontiguousarray(r)  # torch's result is contiguous


def cum_extremum_indices(a, dim, largest: bool):
    """Indices of the running maximum (largest) or minimum along dim; ties take the latest index."""
    d = check_dim(dim, a.ndim, "cummax" if largest else "cummin")
    if a.ndim == 0:
        return xp.zeros((), xp.int64)
    x = xp.moveaxis(a, d, -1)
    if not x.shape[-1]:
        return xp.empty(a.shape, xp.int64)
    # (columns stacked, not written into an array NumPy made: pf.compile's tracer sees each step)
    best = x[..., 0]
    cur = xp.zeros(x.shape[:-1], xp.int64)
    cols = [cur]
    for j in range(1, x.shape[-1]):
        v = x[..., j]
        take = (v >= best) if largest else (v <= best)
        take |= xp.isnan(v)
        take &= ~xp.isnan(best) | xp.isnan(v)
        best = xp.where(take, v, best)
        cur = xp.where(take, j, cur)
        cols.append(cur)
    return xp.ascontiguousarray(xp.moveaxis(xp.stack(cols, -1), -1, d))  # torch's results are contiguous


def mode_indices(a, dim, keepdim=False):
    """Index of the most frequent value along dim (smallest value on ties, its last position)."""
    d = check_dim(dim, a.ndim, "mode")
    if a.ndim == 0:
        return xp.zeros((), xp.int64)
    x = xp.moveaxis(a, d, -1)
    flat = x.reshape(-1, x.shape[-1])
    res = xp.empty(flat.shape[0], xp.int64)
    for r, row in enumerate(flat):
        vals, counts = xp.unique(row, return_counts=True)  # sorted values: argmax picks the smallest
        v = vals[xp.argmax(counts)]
        res[r] = xp.flatnonzero(row == v)[-1]
    res = res.reshape(x.shape[:-1])
    return xp.expand_dims(res, d) if keepdim else res
