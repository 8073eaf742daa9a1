"""Derivative helpers and composites of the scatter and indexing ops.

scatter_reduce follows torch's gradients: 'sum' and 'mean' are linear; 'amax'/'amin' share the
gradient evenly among every value (self's included) equal to the result; 'prod' divides the
result by each factor (zeros raise a clear error rather than give a wrong number).

>>> import pushforward as pf
>>> pf.take(pf.tensor([[1.0, 2.0], [3.0, 4.0]]), pf.tensor([0, 3]))
tensor([1., 4.])
"""

from __future__ import annotations

import numpy as np

from ..composites.util import const as _t
from ..composites.util import ops as _ops
from ...errors import OpError
from ...kernels import basic as K
from ...core.batched import readable, values_of
from ...core.tensor import Tensor
from ...core.creation import zeros, zeros_like
from ...dispatch.batching import loop_batched

__all__ = [
    "scatter_src_backward",
    "scatter_reduce_linear_backward",
    "scatter_reduce_backward",
    "scatter_reduce_jvp",
    "c_take",
    "c_take_along_dim",
    "c_masked_select",
    "c_masked_scatter",
    "c_put",
]


def _front(src, shape):
    """src[:shape[0], :shape[1], ...] (src may be larger than index)."""
    if tuple(src.shape) == tuple(shape):
        return src
    for d, n in enumerate(shape):
        src = src.narrow(d, 0, n)
    return src


def _embed_front(g, shape):
    """g padded with zeros at the end of each dim up to shape (the adjoint of _front)."""
    o = _ops()
    for d, n in enumerate(shape):
        if g.shape[d] < n:
            pad = list(g.shape)
            pad[d] = n - g.shape[d]
            g = o.cat([g, zeros(*pad, dtype=g.dtype)], d)
    return g


def scatter_src_backward(grad, dim, index, src_shape):
    """src's gradient of scatter/scatter_add: grad at the positions each src element went to
    (only src's shape is needed, so the node keeps no src values)."""
    if grad.ndim == 0:
        g = grad.reshape(1).gather(0, index.reshape(-1)).reshape(index.shape)
    else:
        g = grad.gather(dim, index)
    if len(src_shape) == 0:
        return g.sum()
    return _embed_front(g, src_shape)


def _count(self, dim, index):
    return _count_shape(tuple(self.shape), self.dtype, dim, index)


def _count_shape(shape, dtype, dim, index):
    """How many index entries land on each position of a self of `shape`."""
    return _t(K.scatter_count(np.zeros(shape, dtype), dim, np.asarray(index._data)))


def _gather(t, dim, index):
    if t.ndim == 0:
        return t.reshape(1).gather(0, index.reshape(-1)).reshape(index.shape)
    return t.gather(dim, index)


def _scatter_add(like, dim, index, vals):
    return _ops().scatter_add(zeros_like(like), dim, index, vals)


def _no_zeros(*ts):
    for t in ts:
        if (np.asarray(t._data) == 0).any():
            raise NotImplementedError(
                "scatter_reduce: the derivative of reduce='prod' with zeros in self or src is not implemented"
            )


def _extremum_masks(self, index, dim, src, result, include_self):
    ms = self == result
    if not include_self:  # self counts only where nothing was scattered (the result is self there)
        ms = ms & (_count(self, dim, index) == 0)
    msrc = _front(src, index.shape) == _gather(result, dim, index)
    count = ms + _scatter_add(self, dim, index, msrc.to(self.dtype))
    return ms, msrc, count


def scatter_reduce_linear_backward(grad, self_shape, dim, index, src_shape, reduce, include_self, which):
    """'sum' and 'mean' are linear: their gradients need only the shapes (no values kept)."""
    o = _ops()
    cnt = _count_shape(tuple(self_shape), grad.dtype, dim, index)
    n = cnt + 1 if include_self else o.where(cnt == 0, 1.0, cnt)
    g = grad if reduce == "sum" else grad / n
    if which == 0:
        if include_self:
            return g
        return grad.masked_fill(cnt > 0, 0.0)
    return _embed_front(_gather(g, dim, index), src_shape)


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result, which):
    o = _ops()
    if reduce in ("sum", "mean"):
        return scatter_reduce_linear_backward(grad, self.shape, dim, index, src.shape, reduce, include_self, which)
    if reduce in ("amax", "amin"):
        ms, msrc, count = _extremum_masks(self, index, dim, src, result, include_self)
        if which == 0:
            return grad * ms / count
        return _embed_front(_gather(grad / count, dim, index) * msrc, src.shape)
    _no_zeros(self, src)
    hit = _count(self, dim, index) > 0
    if which == 0:
        gs = grad * result / self
        return gs if include_self else o.where(hit, 0.0, gs)
    return _embed_front(_gather(grad * result, dim, index) / _front(src, index.shape), src.shape)


def scatter_reduce_jvp(self_p, self_t, dim, index, src_p, src_t, reduce, include_self, result):
    o = _ops()
    if reduce in ("sum", "mean"):
        return o.scatter_reduce(self_t, dim, index, src_t, reduce, include_self=include_self)
    if reduce in ("amax", "amin"):
        ms, msrc, count = _extremum_masks(self_p, index, dim, src_p, result, include_self)
        return (self_t * ms + _scatter_add(self_p, dim, index, _front(src_t, index.shape) * msrc)) / count
    _no_zeros(self_p, src_p)
    own = self_t / self_p
    if not include_self:
        own = o.where(_count(self_p, dim, index) > 0, 0.0, own)
    return result * (own + _scatter_add(self_p, dim, index, _front(src_t, index.shape) / _front(src_p, index.shape)))


# -- composites --------------------------------------------------------------------------------------


def _index_tensor(name, index):
    """index as an integer tensor (its values are not read: a batched index runs under vmap)."""
    idx = index if isinstance(index, Tensor) else _t(np.asarray(index))
    if idx.dtype.kind not in "iu":
        raise OpError(f"{name}(): expected an int64 index, got dtype {idx.dtype}")
    return idx


def _mask_array(name, mask):
    arr = np.asanyarray(mask._data if isinstance(mask, Tensor) else mask)
    if arr.dtype != np.bool_:
        raise OpError(f"{name}(): expected a boolean mask, got dtype {arr.dtype}")
    return arr


def _flat_index(name, self, index):
    """index (into self flattened) as a tensor in [0, numel): made of ops, so that an index
    computed from batched data runs under vmap; its values are read for the range check only."""
    idx = _index_tensor(name, index)
    n = self.numel()
    vals = values_of(idx) if readable(idx) else np.zeros(0, np.int64)  # (every batch element's)
    if vals.size and (vals.min() < -n or vals.max() >= n):
        raise OpError(
            f"{name}(): index out of range for a tensor of {n} elements (shape {tuple(self.shape)}), "
            f"got index {vals.tolist()}"
        )
    return idx % max(n, 1)


def c_take(self, index):
    return self.reshape(-1)[_flat_index("take", self, index)]


def c_take_along_dim(self, indices, dim=None):
    idx = _index_tensor("take_along_dim", indices)
    if dim is None:
        return self.reshape(-1).gather(0, idx.reshape(-1) % max(self.numel(), 1))
    d = dim % max(self.ndim, 1)
    if idx.ndim != self.ndim:
        raise OpError(
            f"take_along_dim(): input and indices should have the same number of dimensions, got "
            f"shapes {tuple(self.shape)} and {tuple(idx.shape)}"
        )
    shape_x = list(self.shape)
    shape_i = list(idx.shape)
    shape_x[d] = 1
    shape_i[d] = 1
    try:
        b = list(np.broadcast_shapes(tuple(shape_x), tuple(shape_i)))
    except ValueError:
        raise OpError(
            f"take_along_dim(): shapes {tuple(self.shape)} and {tuple(idx.shape)} can't be broadcast apart from dim {d}"
        ) from None
    bx, bi = list(b), list(b)
    bx[d] = self.shape[d]
    bi[d] = idx.shape[d]
    return self.expand(bx).gather(d, idx.expand(bi))


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_masked_select(self, mask):
    m = _mask_array("masked_select", mask)
    try:
        shape = np.broadcast_shapes(tuple(self.shape), m.shape)
    except ValueError:
        raise OpError(
            f"masked_select(): mask of shape {m.shape} can't be broadcast to self of shape {tuple(self.shape)}"
        ) from None
    return _ops().index(self.expand(shape), np.broadcast_to(m, shape).copy())


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_masked_scatter(self, mask, source):
    m = _mask_array("masked_scatter", mask)
    try:
        m = np.broadcast_to(m, tuple(self.shape)).copy()
    except ValueError:
        raise OpError(
            f"masked_scatter(): mask of shape {np.shape(mask)} can't be broadcast to self of shape {tuple(self.shape)}"
        ) from None
    k = int(m.sum())
    if source.numel() < k:
        raise OpError(f"masked_scatter(): source has {source.numel()} elements but the mask selects {k}")
    vals = source.reshape(-1).narrow(0, 0, k)
    return self.index_put(m, vals)


def c_put(self, index, source, accumulate=False):
    idx = _flat_index("put", self, index)
    if source.numel() != idx.numel():
        raise OpError(f"put(): expected source to have as many elements as index ({idx.numel()}), got {source.numel()}")
    return self.reshape(-1).index_put((idx.reshape(-1),), source.reshape(-1), accumulate).reshape(self.shape)
