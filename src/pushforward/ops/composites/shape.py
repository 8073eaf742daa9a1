"""Composite shape and linear-algebra ops: torch's repeat, tile, movedim, meshgrid, ...

Each function is built from differentiable ops of derivatives.yaml, so its backward and
forward derivatives (and higher ones) come from its parts. derivatives.yaml declares the
public op (`composite: c_repeat(self, repeats)`); these are the bodies too long for one
expression.

>>> import pushforward as pf
>>> pf.ones(2).repeat(2, 2).shape
(2, 4)
"""

from __future__ import annotations

import math

import numpy as np

from ...core.batched import BatchedTensor, values_of

from .util import ops as _ops
from ...errors import OpError, check_dim
from ...core.tensor import Tensor
from ...core.creation import as_tensor, tensor, zeros
from ...dispatch.batching import loop_batched

__all__ = [
    "c_axpby",
    "c_addbmm",
    "c_mv",
    "c_repeat",
    "c_tile",
    "c_repeat_interleave",
    "c_movedim",
    "c_unflatten",
    "c_meshgrid",
    "c_broadcast_tensors",
    "c_tensor_split",
    "c_hsplit",
    "c_vsplit",
    "c_rot90",
    "c_block_diag",
    "c_cdist",
    "c_atleast",
    "c_new_tensor",
    "c_new_filled",
    "c_flatten_args",
    "c_hstack",
    "c_vstack",
    "c_dstack",
    "c_column_stack",
    "c_cov",
    "c_corrcoef",
]


def c_axpby(self, beta, other, alpha):
    """beta * self + alpha * other; self is ignored (NaN included) when beta is 0, as in torch."""
    o = _ops()
    prod = other if alpha == 1 else other * alpha
    if beta == 0:
        shape = np.broadcast_shapes(tuple(self.shape), tuple(prod.shape))
        return o.clone(prod.expand(shape)) if tuple(prod.shape) != shape else prod
    return (self if beta == 1 else self * beta) + prod


def c_addbmm(self, batch1, batch2, beta, alpha):
    """beta * self + alpha * sum_b batch1[b] @ batch2[b]. An empty batch sums to zeros of self's
    dtype, as torch's (whose dtype check does not run then; fuzzer: a complex empty batch with a
    real self gave complex128, torch float64)."""
    prod = _ops().bmm(batch1, batch2).sum(0)
    if batch1.shape[0] == 0 and prod.is_complex() and not self.is_complex():
        prod = prod.real
    return c_axpby(self, beta, prod, alpha)


def c_mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise OpError(
            f"mv: expected a 2-D matrix and a 1-D vector, got shapes {tuple(self.shape)} and {tuple(vec.shape)}"
        )
    if self.shape[1] != vec.shape[0]:
        raise OpError(f"mv: size mismatch, got matrix {tuple(self.shape)} and vector {tuple(vec.shape)}")
    return self @ vec


def c_flatten_args(args):
    """torch's `f(*tensors)` also accepts one list: f([a, b])."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


def c_repeat(self, repeats):
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < self.ndim:
        raise OpError(
            f"repeat: number of repeat dims ({len(repeats)}) can not be smaller than the number of "
            f"dims of the tensor ({self.ndim}, shape {tuple(self.shape)})"
        )
    if any(r < 0 for r in repeats):
        raise OpError(f"repeat: repeats must be non-negative, got {repeats}")
    shape = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    x = self.reshape(shape)
    # (s0, s1, ...) -> (1, s0, 1, s1, ...) -> expand to (r0, s0, r1, s1, ...) -> (r0*s0, r1*s1, ...)
    inter = []
    for s in shape:
        inter += [1, s]
    big = []
    for r, s in zip(repeats, shape):
        big += [r, s]
    out = [r * s for r, s in zip(repeats, shape)]
    res = x.reshape(inter).expand(big).reshape(out)
    # torch's repeat (and tile) always return new memory; the reshape of the expanded view is a
    # view itself when nothing is really repeated (all repeats 1, or size-1 dims repeated), and
    # an in-place op on it would then write into self (or be refused as a write into overlap)
    if np.shares_memory(values_of(res), values_of(self)):  # (a batched tensor: all its values)
        res = _ops().clone(res)
    return res


def c_tile(self, dims):
    dims = tuple(int(d) for d in dims)
    if len(dims) < self.ndim:
        dims = (1,) * (self.ndim - len(dims)) + dims
    return c_repeat(self, dims)


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_repeat_interleave(self, repeats, dim=None, output_size=None):
    o = _ops()
    x = self
    if dim is None:
        x = x.reshape(-1)
        dim = 0
    d = dim % max(x.ndim, 1)
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        reps = np.asarray(repeats._data)
    else:
        reps = np.asarray(repeats)
    if reps.dtype.kind not in "iu":
        raise OpError(f"repeat_interleave: repeats must be integers, got dtype {reps.dtype}")
    if reps.ndim == 0 or reps.size == 1:
        reps = np.full(n, int(reps.reshape(-1)[0]))
    if reps.shape != (n,) or (reps < 0).any():
        raise OpError(
            f"repeat_interleave: repeats must have shape ({n},) and be non-negative, got "
            f"{reps.tolist()} for dim {d} of a tensor of shape {tuple(self.shape)}"
        )
    idx = np.repeat(np.arange(n), reps)
    if output_size is not None and output_size != idx.size:
        raise OpError(f"repeat_interleave: output_size={output_size} but repeats sum to {idx.size}")
    return o.index_select(x, d, as_tensor(idx))


def _dimlist(d):
    return (d,) if isinstance(d, (int, np.integer)) else tuple(d)


def c_movedim(self, source, destination):
    src, dst = _dimlist(source), _dimlist(destination)
    n = self.ndim
    if len(src) != len(dst):
        raise OpError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
            f"the same number of dims as destination ({list(dst)} dims)"
        )
    src = [s % max(n, 1) for s in src]
    dst = [s % max(n, 1) for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise OpError(f"movedim: repeated dim in source {src} or destination {dst}")
    order = [d for d in range(n) if d not in src]
    perm = [None] * n
    for s, t in zip(src, dst):
        perm[t] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return self.permute(perm) if n else self.alias()


def c_unflatten(self, dim, sizes):
    d = dim % max(self.ndim, 1)
    sizes = tuple(int(s) for s in sizes)
    if sizes.count(-1) == 1:
        # resolve -1 from the unflattened dim alone (torch does), so that an empty tensor, where
        # reshape cannot infer -1 from the total size, still unflattens
        known = math.prod(s for s in sizes if s != -1)
        n = self.shape[d] if self.ndim else 1
        if known and n % known == 0:
            sizes = tuple(n // known if s == -1 else s for s in sizes)
    return self.reshape(tuple(self.shape[:d]) + sizes + tuple(self.shape[d + 1 :]))


def c_meshgrid(tensors, indexing="ij"):
    ts = c_flatten_args(tensors)
    if indexing not in ("ij", "xy"):
        raise OpError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in ts:
        if t.ndim > 1:
            raise OpError(f"meshgrid: expects 0-D or 1-D tensors, got a tensor of shape {tuple(t.shape)}")
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = shape[i]
        out.append(t.reshape(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def c_broadcast_tensors(tensors):
    ts = c_flatten_args(tensors)
    try:
        shape = np.broadcast_shapes(*[tuple(t.shape) for t in ts])
    except ValueError:
        raise OpError(
            "broadcast_tensors: shapes " + ", ".join(str(tuple(t.shape)) for t in ts) + " cannot be broadcast together"
        ) from None
    return tuple(t.expand(shape) for t in ts)


def c_tensor_split(self, indices_or_sections, dim=0):
    d = dim % max(self.ndim, 1)
    n = self.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios._data.tolist() if ios.ndim else int(ios._data)
    if isinstance(ios, (int, np.integer)):
        k = int(ios)
        if k <= 0:
            raise OpError(f"tensor_split: number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds, start = [], 0
        for s in sizes:
            bounds.append((start, start + s))
            start += s
    else:
        cuts = [min(max(int(c) if c >= 0 else int(c) + n, 0), n) for c in ios]
        edges = [0] + cuts + [n]
        bounds = [(a, max(a, b)) for a, b in zip(edges[:-1], edges[1:])]
    return tuple(self.narrow(d, a, b - a) for a, b in bounds)


def _split_sections(name, self, ios, dim):
    if isinstance(ios, (int, np.integer)) and self.shape[dim] % ios:
        raise OpError(
            f"{name}: attempted to split along dimension {dim}, but the size of the dimension "
            f"{self.shape[dim]} is not divisible by the split_size {ios}!"
        )
    return c_tensor_split(self, ios, dim)


def c_hsplit(self, indices_or_sections):
    if self.ndim < 1:
        raise OpError(f"hsplit: requires a tensor with at least 1 dimension, but got a tensor with {self.ndim} dims")
    return _split_sections("hsplit", self, indices_or_sections, 1 if self.ndim > 1 else 0)


def c_vsplit(self, indices_or_sections):
    if self.ndim < 2:
        raise OpError(f"vsplit: requires a tensor with at least 2 dimension, but got a tensor with {self.ndim} dims")
    return _split_sections("vsplit", self, indices_or_sections, 0)


def c_rot90(self, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2 or self.ndim < 2:
        raise OpError(
            f"rot90: expected total rotation dims == 2 and total dims >= 2, but got dims {dims} for a "
            f"tensor of shape {tuple(self.shape)}"
        )
    a, b = check_dim(dims[0], self.ndim, "rot90"), check_dim(dims[1], self.ndim, "rot90")
    if a == b:
        raise OpError(f"rot90: expected rotation dims to be different, got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k = k % 4
    if k == 1:
        return self.flip([b]).transpose(a, b)
    if k == 2:
        return self.flip([a, b])
    if k == 3:
        return self.flip([a]).transpose(a, b)
    return self.clone()


def c_block_diag(tensors):
    o = _ops()
    ts = [
        t if t.ndim == 2 else t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else None
        for t in c_flatten_args(tensors)
    ]
    if any(t is None for t in ts):
        bad = [tuple(t.shape) for t in c_flatten_args(tensors) if t.ndim > 2]
        raise OpError(f"block_diag: Input tensors must have 2 or fewer dimensions, got shapes {bad}")
    if not ts:
        return zeros(1, 0)
    dt = np.result_type(*[t.dtype for t in ts])
    cols = sum(t.shape[1] for t in ts)
    rows, start = [], 0
    for t in ts:
        r, c = t.shape
        parts = []
        if start:
            parts.append(zeros(r, start, dtype=dt))
        parts.append(t.to(dt) if t.dtype != dt else t)
        if cols - start - c:
            parts.append(zeros(r, cols - start - c, dtype=dt))
        rows.append(o.cat(parts, 1))
        start += c
    return o.cat(rows, 0)


def c_cdist(x1, x2, p=2.0):
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise OpError(
            f"cdist: expected inputs of shape (..., P, M) and (..., R, M), got {tuple(x1.shape)} and {tuple(x2.shape)}"
        )
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, -1)


def c_atleast(self, n):
    if isinstance(self, (list, tuple)):
        return tuple(c_atleast(t, n) for t in self)
    x = self
    if x.ndim >= n:
        return x.alias()
    if n == 3 and x.ndim == 2:
        return x.unsqueeze(-1)
    if x.ndim == 0:
        x = x.reshape(1)
    while x.ndim < n:
        x = x.unsqueeze(0) if x.ndim < 2 or n < 3 else x.unsqueeze(-1)
    return x


def c_new_tensor(self, data, dtype=None):
    return tensor(
        np.asarray(data._data if hasattr(data, "_data") else data).copy(), dtype=self.dtype if dtype is None else dtype
    )


def c_new_filled(self, size, fill_value, dtype=None):
    """torch's new_zeros/new_ones/new_full/new_empty: `size` filled with fill_value, with self's dtype
    unless given. Inside vmap (self batched) the result is batched too, as torch's: one tensor per
    batch element, so a later in-place write of a batched value (copy_) fills each one's own."""
    dtype = self.dtype if dtype is None else dtype
    if type(self) is BatchedTensor:
        phys = c_new_filled(self._phys, (self._phys.shape[0],) + tuple(size), fill_value, dtype)
        return BatchedTensor(phys, self._blevel)
    return _ops().full(tuple(size), fill_value, dtype=dtype)


# -- NumPy's joining functions and covariance (torch's names; NumPy's dispatch calls these too) --------
def c_hstack(tensors):
    ts = c_atleast(tuple(tensors), 1)
    return _ops().cat(list(ts), 0 if ts and ts[0].ndim == 1 else 1)


def c_vstack(tensors):
    return _ops().cat(list(c_atleast(tuple(tensors), 2)), 0)


def c_dstack(tensors):
    return _ops().cat(list(c_atleast(tuple(tensors), 3)), 2)


def c_column_stack(tensors):
    return _ops().cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


def c_cov(self, correction=1, fweights=None, aweights=None):
    if self.ndim > 2:
        raise OpError(f"cov: expected input to have two or fewer dimensions but got an input with {self.ndim}")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    if x.dtype.kind not in "fc":
        x = x.to(np.dtype(np.float64))
    n = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is not None:
            if wt.ndim > 1 or wt.shape[0] != n:
                raise OpError(
                    f"cov: expected {name} to be a 1-D tensor of {n} observations, got shape {tuple(wt.shape)}"
                )
            w = wt if w is None else w * wt
    if w is None:
        avg = _ops().mean(x, 1, True)
        norm = n - correction
    else:
        w = w.to(x.dtype) if w.dtype != x.dtype else w
        w_sum = w.sum()
        avg = (x * w).sum(1, True) / w_sum
        norm = w_sum - (correction if aweights is None else correction * (w * aweights).sum() / w_sum)
    xc = x - avg
    xw = xc if w is None else xc * w
    c = _ops().matmul(xw, xc.mH) / (norm if not isinstance(norm, (int, float)) or norm > 0 else 0.0)
    return c.squeeze() if self.ndim < 2 or c.shape == (1, 1) else c


def c_corrcoef(self):
    c = c_cov(self)
    if c.ndim == 0:
        return c / c
    d = _ops().diagonal(c, 0, 0, 1)
    d = _ops().sqrt(d.real if d.is_complex() else d)
    c = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return c if c.is_complex() else _ops().clamp(c, -1.0, 1.0)
