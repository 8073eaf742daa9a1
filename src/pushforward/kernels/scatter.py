"""NumPy kernels of the scatter and index-update ops, re-exported by kernels/basic.py.

Index checks follow torch's: an int64 index with as many dims as self, no larger than src,
and (except along dim) no larger than self; entries in range. Duplicate indices: scatter and
index_copy write the last value, the reductions combine all of them.
"""

from __future__ import annotations

from ..core.backend import xp
from ..core.lazy import as_array
from ..errors import check_dim
from ..errors import OpError

__all__ = ["scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill", "scatter_count"]

_REDUCE = ("sum", "prod", "mean", "amax", "amin")


def _positions(name, a, dim, index, src=None):
    """Index tuple addressing self for every element of `index` (dim replaced by index), the
    matching slice of src."""
    index = as_array(index)
    if index.dtype.kind not in "iu":
        raise OpError(f"{name}(): Expected dtype int64 for index, got {index.dtype}")
    d = check_dim(dim, a.ndim, name)
    if a.ndim == 0:
        if index.ndim > 1 or index.size > 1:
            raise OpError(f"{name}(): index of shape {index.shape} for a 0-d self")
        index = index.reshape(1) if index.ndim else index.reshape(1)
        a1 = a.reshape(1)
        return _positions(name, a1, 0, index, None if src is None else as_array(src).reshape(-1))
    if index.ndim != a.ndim:
        raise OpError(
            f"{name}(): Index tensor must have the same number of dimensions as self tensor "
            f"(index shape {index.shape}, self shape {a.shape})"
        )
    for i in range(a.ndim):
        if i != d and index.shape[i] > a.shape[i]:
            raise OpError(
                f"{name}(): Expected index {index.shape} to be smaller than self {a.shape} apart from dimension {d}"
            )
    if src is not None and xp.ndim(src) > 0:
        src = as_array(src)
        if src.ndim != a.ndim or any(index.shape[i] > src.shape[i] for i in range(a.ndim)):
            raise OpError(f"{name}(): Expected index {index.shape} to be smaller than src {src.shape}")
    n = a.shape[d]
    if index.size and (index.min() < -n or index.max() >= n):
        raise OpError(
            f"{name}(): index {int(index.max() if index.max() >= n else index.min())} is out of bounds "
            f"for dimension {d} with size {n}"
        )
    idx = list(xp.indices(index.shape, sparse=True))
    idx[d] = index % n if n else index
    pos = tuple(xp.broadcast_arrays(*idx))
    if src is None:
        return pos, None
    src = as_array(src)
    if src.ndim == 0:
        return pos, xp.broadcast_to(src, index.shape)
    return pos, src[tuple(slice(0, s) for s in index.shape)]


def scatter(a, dim, index, src):
    pos, vals = _positions("scatter", a, dim, index, src)
    out = a.copy()
    if out.ndim == 0:
        flat = out.reshape(1)
        flat[pos] = vals
        return flat.reshape(())
    out[pos] = vals
    return out


def scatter_add(a, dim, index, src):
    pos, vals = _positions("scatter_add", a, dim, index, src)
    out = a.copy().reshape(a.shape if a.ndim else (1,))
    xp.add.at(out, pos, vals)
    return out.reshape(a.shape)


def scatter_count(a, dim, index):
    """How many index entries land on each position of self (as self's dtype)."""
    pos, _ = _positions("scatter_reduce", a, dim, index)
    out = xp.zeros(a.shape if a.ndim else (1,), a.dtype)
    xp.add.at(out, pos, 1)
    return out.reshape(a.shape)


def scatter_reduce(a, dim, index, src, reduce, include_self=True):
    if reduce not in _REDUCE:
        raise OpError(f"scatter_reduce(): reduce argument must be one of {', '.join(_REDUCE)}, got {reduce!r}")
    pos, vals = _positions("scatter_reduce", a, dim, index, src)
    out = a.copy().reshape(a.shape if a.ndim else (1,))
    if not include_self:
        ident = {"sum": 0, "mean": 0, "prod": 1, "amax": -xp.inf, "amin": xp.inf}[reduce]
        out[pos] = ident
    if reduce in ("sum", "mean"):
        xp.add.at(out, pos, vals)
        if reduce == "mean":
            cnt = xp.zeros(out.shape, xp.int64)
            xp.add.at(cnt, pos, 1)
            cnt = cnt + (1 if include_self else 0)
            out = xp.where(cnt > 0, out / xp.maximum(cnt, 1), out)
            if out.dtype.kind in "iu":
                out = out.astype(a.dtype)
    elif reduce == "prod":
        xp.multiply.at(out, pos, vals)
    elif reduce == "amax":
        xp.maximum.at(out, pos, vals)
    else:
        xp.minimum.at(out, pos, vals)
    return out.astype(a.dtype, copy=False).reshape(a.shape)


def _index_slices(name, a, dim, index, source=None):
    index = as_array(index)
    if index.dtype.kind not in "iu":
        raise OpError(f"{name}(): Expected dtype int64 for index, got {index.dtype}")
    if index.ndim > 1:
        raise OpError(f"{name}(): Index is supposed to be a vector, got shape {index.shape}")
    d = check_dim(dim, a.ndim, name)
    index = index.reshape(-1)
    n = a.shape[d] if a.ndim else 1
    if index.size and (index.min() < -n or index.max() >= n):
        raise OpError(f"{name}(): index out of range for dimension {d} of size {n} (index {index.tolist()})")
    sl = [slice(None)] * max(a.ndim, 1)
    sl[d] = index
    if source is not None and xp.ndim(source) > 0:
        want = list(a.shape)
        want[d] = index.size
        if tuple(xp.shape(source)) != tuple(want):
            raise OpError(
                f"{name}(): source of shape {xp.shape(source)} does not match self {a.shape} with "
                f"{index.size} indices along dim {d} (expected {tuple(want)})"
            )
    return tuple(sl)


def index_add(a, dim, index, source, alpha=1):
    sl = _index_slices("index_add", a, dim, index, source)
    out = a.copy().reshape(a.shape if a.ndim else (1,))
    xp.add.at(out, sl, source if alpha == 1 else xp.multiply(source, alpha))
    return out.reshape(a.shape)


def index_copy(a, dim, index, source):
    sl = _index_slices("index_copy", a, dim, index, source)
    out = a.copy().reshape(a.shape if a.ndim else (1,))
    out[sl] = xp.reshape(source, out[sl].shape)
    return out.reshape(a.shape)


def index_fill(a, dim, index, value):
    if xp.ndim(value):
        raise OpError(f"index_fill(): only supports a 0-dimensional value tensor, got shape {xp.shape(value)}")
    sl = _index_slices("index_fill", a, dim, index)
    out = a.copy().reshape(a.shape if a.ndim else (1,))
    out[sl] = value
    return out.reshape(a.shape)
