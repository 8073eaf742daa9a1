"""Op-database entries of the breadth ops: composites and shape ops, sorting and scans, scatter and
indexing, and pf.nn.functional. `register(add)` is called by opdb._build.

Samples stay small (a few elements per input) so gradcheck's full Jacobians are cheap, and
values of ops with kinks (sort ties, max pooling, quantile steps) are drawn apart.
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
from scipy.linalg import block_diag

from ..ops import generated as ops
from .opinfo import REAL, REAL_COMPLEX, OpInfo, SampleInput, _fn, _leaf, _method, _unary
from ..core.creation import as_tensor
from ..nn import functional as F
from ..kernels.strided import layout_of

__all__ = ["register"]


def _idx(values) -> object:
    return _leaf(np.asarray(values, dtype=np.int64))


# -- references (NumPy) -------------------------------------------------------------------------------


def _r_axpby(self, beta, other, alpha):
    return other * alpha if beta == 0 else beta * self + alpha * other


def _r_repeat(x, *reps):
    if len(reps) == 1 and isinstance(reps[0], (tuple, list)):
        reps = tuple(reps[0])
    return np.tile(x.reshape((1,) * (len(reps) - x.ndim) + x.shape), reps)


def _r_tile(x, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return np.tile(x, dims)


def _r_repeat_interleave(x, repeats, dim=None, output_size=None):
    reps = np.asarray(repeats)
    return np.repeat(x, reps, axis=dim)


def _r_tensor_split(x, ios, dim=0):
    return tuple(np.array_split(x, ios, axis=dim))


def _r_block_diag(*ts):
    return block_diag(*[np.atleast_2d(t) for t in ts])


def _r_cdist(a, b, p=2.0):
    return np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], ord=p, axis=-1)


def _r_meshgrid(*ts, indexing="ij"):
    return tuple(np.meshgrid(*ts, indexing=indexing))


# -- samples: composites and shape ---------------------------------------------------------------------


def s_addmm(m):
    return [
        SampleInput(m((2, 3)), (m((2, 4)), m((4, 3))), {}, "plain"),
        SampleInput(m((3,)), (m((2, 2)), m((2, 3))), {"beta": 0.5, "alpha": 2.0}, "broadcast self, beta alpha"),
        SampleInput(m((2, 3)), (m((2, 1)), m((1, 3))), {"beta": 0}, "beta=0"),
    ]


def s_addmv(m):
    return [
        SampleInput(m((2,)), (m((2, 3)), m((3,))), {}, "plain"),
        SampleInput(m(()), (m((2, 3)), m((3,))), {"beta": -1.0, "alpha": 0.5}, "0-d self"),
    ]


def s_addbmm(m):
    return [
        SampleInput(m((2, 3)), (m((2, 2, 2)), m((2, 2, 3))), {}, "plain"),
        SampleInput(m((2, 1)), (m((3, 2, 1)), m((3, 1, 2))), {"beta": 2.0, "alpha": -1.0}, "beta alpha"),
    ]


def s_baddbmm(m):
    return [
        SampleInput(m((2, 2, 3)), (m((2, 2, 2)), m((2, 2, 3))), {}, "plain"),
        SampleInput(m((3,)), (m((2, 1, 2)), m((2, 2, 3))), {"beta": 0.5, "alpha": 2.0}, "broadcast"),
    ]


def s_addc(m):
    lo = {"low": 0.5, "high": 2.0}
    return [
        SampleInput(m((2, 3)), (m((2, 3)), m((2, 3), **lo)), {}, "plain"),
        SampleInput(m((3,)), (m((2, 1)), m((2, 3), **lo)), {"value": -0.5}, "broadcast, value"),
    ]


def s_lerp(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)), 0.3), {}, "scalar weight"),
        SampleInput(m((2, 3)), (m((3,)), m((2, 1), low=0.0, high=1.0)), {}, "tensor weight"),
        SampleInput(m(()), (m(()), 0.7), {}, "0-d"),
    ]


def s_mv(m):
    return [SampleInput(m((2, 3)), (m((3,)),)), SampleInput(m((1, 1)), (m((1,)),), {}, "1x1")]


def s_vdot(m):
    return [SampleInput(m((3,)), (m((3,)),)), SampleInput(m((1,)), (m((1,)),), {}, "1")]


def s_repeat(m):
    return [
        SampleInput(m((2, 3)), (2, 1)),
        SampleInput(m((3,)), (2, 2), {}, "new dims"),
        SampleInput(m(()), (3,), {}, "0-d"),
        SampleInput(m((2,)), ((1, 2, 2),), {}, "tuple"),
    ]


def s_tile(m):
    return [
        SampleInput(m((2, 3)), ((2,),), {}, "fewer dims"),
        SampleInput(m((3,)), ((2, 2),), {}, "more dims"),
        SampleInput(m((2, 2)), (1, 2), {}, "varargs"),
    ]


def s_repeat_interleave(m):
    return [
        SampleInput(m((3,)), (2,)),
        SampleInput(m((2, 3)), (_idx([1, 0, 2]), 1), {}, "tensor repeats"),
        SampleInput(m((2, 2)), (2,), {}, "flattened"),
        SampleInput(m((2, 3)), (2, 0), {}, "dim=0"),
    ]


def s_movedim(m):
    return [
        SampleInput(m((2, 3, 4)), (0, -1)),
        SampleInput(m((2, 3, 4)), ((0, 1), (2, 0)), {}, "two dims"),
        SampleInput(m((2, 3)), (1, 0)),
    ]


def s_unflatten(m):
    return [SampleInput(m((6,)), (0, (2, 3))), SampleInput(m((2, 6)), (-1, (3, -1)), {}, "-1")]


def s_meshgrid(m):
    return [
        SampleInput(m((2,)), (m((3,)),), {}, "ij"),
        SampleInput(m((2,)), (m((3,)), m(())), {}, "three"),
        SampleInput(m((2,)), (m((3,)),), {"indexing": "xy"}, "xy"),
    ]


def s_broadcast_tensors(m):
    return [SampleInput(m((2, 1)), (m((3,)),)), SampleInput(m(()), (m((2, 2)), m((1, 2))), {}, "three")]


def s_tensor_split(m):
    return [
        SampleInput(m((5,)), (2,)),
        SampleInput(m((2, 5)), ([1, 3], 1), {}, "indices"),
        SampleInput(m((3, 2)), (4,), {}, "more sections than size"),
    ]


def s_hsplit(m):
    return [SampleInput(m((2, 4)), (2,)), SampleInput(m((4,)), ([1, 3],), {}, "1-d indices")]


def s_vsplit(m):
    return [SampleInput(m((4, 2)), (2,)), SampleInput(m((3, 2)), ([1],), {}, "indices")]


def s_rot90(m):
    return [
        SampleInput(m((2, 3)), (), {}, "k=1"),
        SampleInput(m((2, 3)), (2,), {}, "k=2"),
        SampleInput(m((2, 3, 2)), (3, (0, 2)), {}, "k=3 dims"),
        SampleInput(m((2, 3)), (-1, (1, 0)), {}, "k=-1"),
    ]


def s_block_diag(m):
    return [SampleInput(m((1, 2)), (m((2, 1)),)), SampleInput(m((2,)), (m(()), m((2, 2))), {}, "1-d, 0-d, 2-d")]


def s_cdist(m):
    return [
        SampleInput(m((2, 3)), (m((3, 3)),)),
        SampleInput(m((2, 2, 2)), (m((2, 3, 2)),), {"p": 1.0}, "batched p=1"),
        SampleInput(m((2, 2)), (m((2, 2)),), {"p": 3.0}, "p=3"),
    ]


def s_atleast(m):
    return [
        SampleInput(m(()), (), {}, "0-d"),
        SampleInput(m((3,)), (), {}, "1-d"),
        SampleInput(m((2, 3)), (), {}, "2-d"),
        SampleInput(m((2, 1, 2)), (), {}, "3-d"),
    ]


def s_as(m):
    return [SampleInput(m((2, 3)), (m((3, 2)),)), SampleInput(m((4,)), (m((2, 2)),), {}, "1-d")]


def s_expand_as(m):
    return [SampleInput(m((1, 3)), (m((2, 3)),)), SampleInput(m(()), (m((2,)),), {}, "0-d")]


def s_type_as(m):
    return [
        SampleInput(m((2, 3)), (m((1,), dtype=np.complex128),), {}, "to complex"),
        SampleInput(m((2,)), (m((1,)),), {}, "same"),
    ]


def s_new(m):
    return [SampleInput(m((2,)), (3,), {}, "int"), SampleInput(m((2,)), ((2, 2),), {"dtype": np.float32}, "dtype")]


def s_as_strided(m):
    return [
        SampleInput(m((3, 3)), ((2, 2), (1, 3), 1), {}, "transposed window"),
        SampleInput(m((4,)), ((2, 2), (2, 1), 0), {}, "window"),
        SampleInput(m((2, 3)), ((3,), (2,)), {}, "default offset"),
        # (last: an in-place write through a view whose elements overlap is not torch's; see
        # docs/coming-from-pytorch.md)
        SampleInput(m((4,)), ((3, 2), (1, 1), 0), {}, "overlapping"),
        SampleInput(m((3,)), ((0, 2), (1, 1), 2), {}, "empty"),
    ]


def _r_as_strided(x, size, stride, offset=0, layout=None):
    flat = np.ascontiguousarray(x).reshape(-1)
    if not np.prod(size):
        return np.zeros(size, x.dtype)
    return np.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * x.itemsize for s in stride)).copy()


def s_new_full(m):
    return [SampleInput(m((2,)), ((2, 3), 1.5), {}, "plain")]


def s_new_tensor(m):
    return [SampleInput(m((2,)), ([1, 2],), {}, "list"), SampleInput(m((2,)), ([1.5],), {"dtype": np.float32}, "dtype")]


def _atleast_ref(n):
    return {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]


def _group1(add):
    add(
        OpInfo(
            "addmm",
            _fn("addmm"),
            s_addmm,
            lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "addmv",
            _fn("addmv"),
            s_addmv,
            lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "addbmm",
            _fn("addbmm"),
            s_addbmm,
            lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, (a @ b).sum(0), alpha),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "baddbmm",
            _fn("baddbmm"),
            s_baddbmm,
            lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "addcmul", _fn("addcmul"), s_addc, lambda s, a, b, value=1: s + value * a * b, REAL_COMPLEX, composite=True
        )
    )
    add(OpInfo("addcdiv", _fn("addcdiv"), s_addc, lambda s, a, b, value=1: s + value * a / b, REAL, composite=True))
    add(OpInfo("lerp", _fn("lerp"), s_lerp, lambda s, e, w: s + w * (e - s), REAL, composite=True))
    add(OpInfo("mv", _fn("mv"), s_mv, np.matmul, REAL_COMPLEX, composite=True))
    add(OpInfo("vdot", _fn("vdot"), s_vdot, np.vdot, REAL_COMPLEX, composite=True))
    add(OpInfo("repeat", _method("repeat"), s_repeat, _r_repeat, REAL_COMPLEX, composite=True))
    add(OpInfo("tile", _fn("tile"), s_tile, _r_tile, REAL, composite=True))
    add(
        OpInfo(
            "repeat_interleave",
            _fn("repeat_interleave"),
            s_repeat_interleave,
            _r_repeat_interleave,
            REAL,
            composite=True,
        )
    )
    add(OpInfo("movedim", _fn("movedim"), s_movedim, np.moveaxis, REAL_COMPLEX, composite=True, is_view=True))
    add(
        OpInfo(
            "unflatten",
            _fn("unflatten"),
            s_unflatten,
            lambda x, d, s: x.reshape(x.shape[: d % x.ndim] + tuple(s) + x.shape[d % x.ndim + 1 :]),
            REAL,
            composite=True,
        )
    )
    add(OpInfo("meshgrid", lambda *a, **k: ops.meshgrid(*a, **k), s_meshgrid, _r_meshgrid, REAL, composite=True))
    add(
        OpInfo(
            "broadcast_tensors",
            lambda *a: ops.broadcast_tensors(*a),
            s_broadcast_tensors,
            lambda *a: tuple(np.broadcast_arrays(*a)),
            REAL,
            composite=True,
        )
    )
    add(OpInfo("tensor_split", _fn("tensor_split"), s_tensor_split, _r_tensor_split, REAL, composite=True))
    add(OpInfo("hsplit", _fn("hsplit"), s_hsplit, lambda x, i: tuple(np.hsplit(x, i)), REAL, composite=True))
    add(OpInfo("vsplit", _fn("vsplit"), s_vsplit, lambda x, i: tuple(np.vsplit(x, i)), REAL, composite=True))
    add(
        OpInfo(
            "rot90",
            _fn("rot90"),
            s_rot90,
            lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("block_diag", lambda *a: ops.block_diag(*a), s_block_diag, _r_block_diag, REAL, composite=True))
    add(OpInfo("cdist", _fn("cdist"), s_cdist, _r_cdist, REAL, composite=True))
    for n in (1, 2, 3):
        add(OpInfo(f"atleast_{n}d", _fn(f"atleast_{n}d"), s_atleast, _atleast_ref(n), REAL, composite=True))
    add(
        OpInfo("view_as", _method("view_as"), s_as, lambda x, o: x.reshape(o.shape), REAL, composite=True, is_view=True)
    )
    add(OpInfo("reshape_as", _method("reshape_as"), s_as, lambda x, o: x.reshape(o.shape), REAL, composite=True))
    add(
        OpInfo(
            "expand_as",
            _method("expand_as"),
            s_expand_as,
            lambda x, o: np.broadcast_to(x, o.shape),
            REAL,
            composite=True,
            is_view=True,
        )
    )
    add(OpInfo("type_as", _method("type_as"), s_type_as, lambda x, o: x.astype(o.dtype), REAL, composite=True))
    add(
        OpInfo(
            "new_zeros",
            _method("new_zeros"),
            s_new,
            lambda x, *s, dtype=None: np.zeros(s[0] if len(s) == 1 else s, dtype or x.dtype),
            REAL,
            composite=True,
            differentiable=False,
        )
    )
    add(
        OpInfo(
            "new_ones",
            _method("new_ones"),
            s_new,
            lambda x, *s, dtype=None: np.ones(s[0] if len(s) == 1 else s, dtype or x.dtype),
            REAL,
            composite=True,
            differentiable=False,
        )
    )
    add(
        OpInfo(
            "new_full",
            _method("new_full"),
            s_new_full,
            lambda x, s, v, dtype=None: np.full(s, v, dtype or x.dtype),
            REAL,
            composite=True,
            differentiable=False,
        )
    )
    add(OpInfo("as_strided", _fn("as_strided"), s_as_strided, _r_as_strided, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "_as_strided",
            _fn("_as_strided"),
            lambda m: [
                SampleInput(s.input, (*s.args, layout_of(s.input._data)), {}, s.name)
                for s in s_as_strided(m)
                if len(s.args) == 3
            ],
            _r_as_strided,
            REAL_COMPLEX,
            is_view=True,
        )
    )
    add(
        OpInfo(
            "new_empty",
            _method("new_empty"),
            s_new,
            lambda x, *s, dtype=None: np.zeros(s[0] if len(s) == 1 else s, dtype or x.dtype),
            REAL,
            composite=True,
            differentiable=False,
        )
    )
    add(
        OpInfo(
            "new_tensor",
            _method("new_tensor"),
            s_new_tensor,
            lambda x, d, dtype=None: np.asarray(d, dtype or x.dtype),
            REAL,
            composite=True,
            differentiable=False,
        )
    )


# -- samples: sorting and scans -------------------------------------------------------------------------

NAN = float("nan")


def _r_sort(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    if descending:
        n = x.shape[dim]
        idx = n - 1 - np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    else:
        idx = np.argsort(x, axis=dim, kind="stable")
    return np.take_along_axis(x, idx, dim), idx


def _r_topk(x, k, dim=-1, largest=True, sorted=True):
    v, i = _r_sort(x, dim, descending=largest)
    return np.take(v, np.arange(k), axis=dim), np.take(i, np.arange(k), axis=dim)


def _r_kthvalue(x, k, dim=-1, keepdim=False):
    v, i = _r_sort(x, dim)
    return np.take(v, [k - 1], axis=dim).squeeze(dim) if not keepdim else np.take(v, [k - 1], axis=dim), np.take(
        i, [k - 1], axis=dim
    ).squeeze(dim) if not keepdim else np.take(i, [k - 1], axis=dim)


def _r_median(x, dim=None, keepdim=False, nan=False):
    """Lower median by a row-by-row loop over sorted Python lists (NaN: skipped or propagated)."""
    if dim is None:
        vals = sorted(v for v in x.ravel().tolist() if not (nan and v != v))
        if not nan and any(v != v for v in vals):
            return np.asarray(np.nan, x.dtype)
        return np.asarray(vals[(len(vals) - 1) // 2], x.dtype)
    xm = np.moveaxis(x, dim, -1)
    v = np.empty(xm.shape[:-1], x.dtype)
    i = np.empty(xm.shape[:-1], np.int64)
    for pos in np.ndindex(*xm.shape[:-1]):
        row = list(enumerate(xm[pos].tolist()))
        nans = [k for k, r in row if r != r]
        if nans and not nan:
            v[pos], i[pos] = np.nan, nans[0]
            continue
        ok = sorted((r, k) for k, r in row if r == r)
        v[pos], i[pos] = ok[(len(ok) - 1) // 2] if ok else (np.nan, 0)
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


def _r_mode(x, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    xm = np.moveaxis(x, dim, -1)
    v = np.empty(xm.shape[:-1], x.dtype)
    i = np.empty(xm.shape[:-1], np.int64)
    for pos in np.ndindex(*xm.shape[:-1]):
        row = xm[pos].tolist()
        best = min(set(row), key=lambda a: (-row.count(a), a))
        v[pos], i[pos] = best, len(row) - 1 - row[::-1].index(best)
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


def _r_cum_extremum(largest):
    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        xm = np.moveaxis(x, dim, -1)
        i = np.zeros(xm.shape, np.int64)
        for pos in np.ndindex(*xm.shape[:-1]):
            row, best = xm[pos].tolist(), 0
            for k in range(len(row)):
                if (row[k] >= row[best]) if largest else (row[k] <= row[best]):
                    best = k
                i[pos + (k,)] = best
        v = np.take_along_axis(xm, i, -1)
        return np.moveaxis(v, -1, dim), np.moveaxis(i, -1, dim)

    return ref


def _r_quantile(x, q, dim=None, keepdim=False, interpolation="linear", nan=False):
    f = np.nanquantile if nan else np.quantile
    method = interpolation if interpolation != "nearest" else "nearest"
    return np.asarray(f(x, q, axis=dim, keepdims=keepdim, method=method)).astype(x.dtype)


def s_sort(m):
    out = [
        SampleInput(m((2, 4)), (), {}, "last dim"),
        SampleInput(m((3, 2)), (0, True), {}, "dim 0 descending"),
        SampleInput(m((4,)), (), {"descending": True, "stable": True}, "stable descending"),
        SampleInput(m(()), (), {}, "0-d"),
    ]
    if m.dtype.kind == "f":
        out.append(SampleInput(m.tensor([1.0, 3.0, 1.0, 2.0, 3.0]), (0, True), {}, "ties", grad=False))
    return out


def s_topk(m):
    return [
        SampleInput(m((2, 4)), (2,)),
        SampleInput(m((4, 2)), (3, 0), {}, "dim 0"),
        SampleInput(m((5,)), (2,), {"largest": False}, "smallest"),
        SampleInput(m((3,)), (0,), {}, "k=0"),
    ]


def s_kthvalue(m):
    return [
        SampleInput(m((2, 4)), (2,)),
        SampleInput(m((3, 2)), (3, 0, True), {}, "dim 0 keepdim"),
        SampleInput(m((5,)), (1,), {}, "min"),
        SampleInput(m(()), (1,), {}, "0-d"),
    ]


def s_median(m):
    out = [
        SampleInput(m((2, 4)), (), {}, "all, even count"),
        SampleInput(m((5,)), (), {}, "odd count"),
        SampleInput(m((2, 4)), (1,), {}, "dim"),
        SampleInput(m((3, 2)), (0, True), {}, "keepdim"),
    ]
    out.append(SampleInput(m.tensor([[1.0, NAN, 2.0], [0.5, -1.0, 2.0]]), (1,), {}, "NaN row", grad=False))
    return out


def s_nanmedian(m):
    return [
        SampleInput(m((2, 4)), (), {}, "all"),
        SampleInput(m((2, 4)), (1,), {}, "dim"),
        SampleInput(m.tensor([[1.0, NAN, 2.0, 0.5], [0.5, -1.0, 2.0, 1.5]]), (1,), {}, "NaN"),
        SampleInput(m.tensor([1.0, NAN, 2.0, 0.5, -0.3]), (), {}, "NaN all"),
    ]


def s_quantile(m):
    out = [
        SampleInput(m((2, 4)), (0.3,), {}, "all"),
        SampleInput(m((2, 4)), (0.4, 1), {}, "dim"),
        SampleInput(m((3, 4)), (np.array([0.1, 0.5, 0.95]), 1, True), {}, "q tensor keepdim"),
        SampleInput(m((5,)), (np.array([0.3, 0.6]),), {}, "q tensor all"),
    ]
    for mode in ("lower", "higher", "midpoint", "nearest"):
        out.append(SampleInput(m((2, 5)), (0.3, 1), {"interpolation": mode}, mode))
    return out


def s_nanquantile(m):
    return s_quantile(m)[:2] + [
        SampleInput(m.tensor([[1.0, NAN, 2.0, 0.5], [0.5, -1.0, 2.0, 1.5]]), (0.4, 1), {}, "NaN"),
        SampleInput(
            m.tensor([[1.0, NAN, 2.0, 0.5, 0.2], [0.5, -1.0, 2.0, 1.5, NAN]]),
            (0.6, 1),
            {"interpolation": "midpoint"},
            "NaN midpoint",
        ),
    ]


def s_mode(m):
    return [
        SampleInput(m.tensor([[1.0, 2.0, 2.0, 0.5], [0.5, 0.5, 1.5, 1.5]]), (), {}, "ties take smallest", grad=False),
        SampleInput(m.tensor([[1.0, 3.0], [1.0, 2.0], [0.5, 3.0]]), (0, True), {}, "dim 0 keepdim", grad=False),
        SampleInput(m((4,)), (), {}, "all distinct"),
        SampleInput(m(()), (), {}, "0-d"),
    ]


def s_cum_extremum(m):
    out = [SampleInput(m((2, 4)), (1,)), SampleInput(m((3, 2)), (0,)), SampleInput(m(()), (0,), {}, "0-d")]
    out.append(SampleInput(m.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), (0,), {}, "ties", grad=False))
    return out


def s_logcumsumexp(m):
    return [
        SampleInput(m((4,)), (0,)),
        SampleInput(m((2, 3)), (1,)),
        SampleInput(m((2, 3)), (0,)),
        SampleInput(m(()), (0,), {}, "0-d"),
        SampleInput(m.tensor([30.0, -20.0, 29.0]), (0,), {}, "large spread"),
    ]


def s_nansum(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), (1,), {}, "dim"),
        SampleInput(m.tensor([[1.0, NAN, 2.0], [0.5, 1.0, NAN]]), (0, True), {}, "NaN keepdim"),
    ]


def s_var_mean(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), (1,), {}, "dim"),
        SampleInput(m((2, 3)), (0,), {"correction": 0, "keepdim": True}, "correction keepdim"),
    ]


def s_aminmax(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), (), {"dim": 1}, "dim"),
        SampleInput(m((2, 3)), (), {"dim": 0, "keepdim": True}, "keepdim"),
    ]


def s_diff(m):
    return [
        SampleInput(m((4,))),
        SampleInput(m((2, 4)), (2,), {}, "n=2"),
        SampleInput(m((3, 2)), (1, 0), {}, "dim 0"),
        SampleInput(m((2, 3)), (1, -1, m((2, 1)), m((2, 2))), {}, "prepend append"),
    ]


def s_dist(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)),)),
        SampleInput(m((3,)), (m((2, 3)), 1), {}, "p=1 broadcast"),
        SampleInput(m((3,)), (m((3,)), 3), {}, "p=3"),
    ]


def _r_diff(x, n=1, dim=-1, prepend=None, append=None):
    return np.diff(
        x,
        n,
        axis=dim,
        prepend=prepend if prepend is not None else np._NoValue,
        append=append if append is not None else np._NoValue,
    )


def _group2(add):
    add(OpInfo("sort", _fn("sort"), s_sort, _r_sort, REAL))
    add(
        OpInfo(
            "argsort",
            _fn("argsort"),
            s_sort,
            lambda *a, **k: _r_sort(*a, **k)[1],
            REAL,
            composite=True,
            differentiable=False,
        )
    )
    add(OpInfo("topk", _fn("topk"), s_topk, _r_topk, REAL))
    add(OpInfo("kthvalue", _fn("kthvalue"), s_kthvalue, _r_kthvalue, REAL))
    add(OpInfo("median", _fn("median"), s_median, _r_median, REAL, composite=True))
    add(
        OpInfo(
            "nanmedian",
            _fn("nanmedian"),
            s_nanmedian,
            lambda *a, **k: _r_median(*a, **k, nan=True),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "quantile",
            _fn("quantile"),
            s_quantile,
            lambda x, q, *a, **k: _r_quantile(x, np.asarray(q), *a, **k),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "nanquantile",
            _fn("nanquantile"),
            s_nanquantile,
            lambda x, q, *a, **k: _r_quantile(x, np.asarray(q), *a, **k, nan=True),
            REAL,
            composite=True,
        )
    )
    add(OpInfo("mode", _fn("mode"), s_mode, _r_mode, REAL, composite=True))
    add(OpInfo("cummax", _fn("cummax"), s_cum_extremum, _r_cum_extremum(True), REAL, composite=True))
    add(OpInfo("cummin", _fn("cummin"), s_cum_extremum, _r_cum_extremum(False), REAL, composite=True))
    add(
        OpInfo(
            "logcumsumexp",
            _fn("logcumsumexp"),
            s_logcumsumexp,
            lambda x, dim: np.logaddexp.accumulate(x, axis=dim) if x.ndim else x.copy(),
            REAL,
        )
    )
    add(
        OpInfo(
            "nansum",
            _fn("nansum"),
            s_nansum,
            lambda x, dim=None, keepdim=False: np.nansum(x, axis=dim, keepdims=keepdim),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "nanmean",
            _fn("nanmean"),
            s_nansum,
            lambda x, dim=None, keepdim=False: np.nanmean(x, axis=dim, keepdims=keepdim),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "var_mean",
            _fn("var_mean"),
            s_var_mean,
            lambda x, dim=None, correction=1, keepdim=False: (
                np.var(x, axis=dim, ddof=correction, keepdims=keepdim),
                np.mean(x, axis=dim, keepdims=keepdim),
            ),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "std_mean",
            _fn("std_mean"),
            s_var_mean,
            lambda x, dim=None, correction=1, keepdim=False: (
                np.std(x, axis=dim, ddof=correction, keepdims=keepdim),
                np.mean(x, axis=dim, keepdims=keepdim),
            ),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "aminmax",
            _fn("aminmax"),
            s_aminmax,
            lambda x, dim=None, keepdim=False: (
                np.amin(x, axis=dim, keepdims=keepdim),
                np.amax(x, axis=dim, keepdims=keepdim),
            ),
            REAL,
            composite=True,
        )
    )
    add(OpInfo("diff", _fn("diff"), s_diff, _r_diff, REAL_COMPLEX, composite=True))
    add(OpInfo("dist", _fn("dist"), s_dist, lambda a, b, p=2: np.linalg.norm((a - b).ravel(), p), REAL, composite=True))


# -- samples: scatter and indexing ----------------------------------------------------------------------


def _r_positions(a, dim, index):
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    return tuple(np.broadcast_arrays(*idx))


def _r_front(src, index):
    src = np.asarray(src)
    return np.broadcast_to(src, index.shape) if src.ndim == 0 else src[tuple(slice(0, s) for s in index.shape)]


def _r_scatter(a, dim, index, src):
    out = a.copy()
    pos = _r_positions(a, dim, index)
    for k in np.ndindex(*index.shape):  # element by element: the last duplicate wins
        out[tuple(p[k] for p in pos)] = _r_front(src, index)[k]
    return out


def _r_scatter_reduce(a, dim, index, src, reduce="sum", include_self=True):
    pos = _r_positions(a, dim, index)
    vals = _r_front(src, index)
    groups = {}
    for k in np.ndindex(*index.shape):
        groups.setdefault(tuple(int(p[k]) for p in pos), []).append(vals[k])
    out = a.copy()
    for where, vs in groups.items():
        vs = vs + ([a[where]] if include_self else [])
        out[where] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](vs)
    return out


def _r_index_sl(a, dim, index):
    sl = [slice(None)] * a.ndim
    sl[dim] = index
    return tuple(sl)


def _r_index_add(a, dim, index, source, alpha=1):
    out = a.copy()
    np.add.at(out, _r_index_sl(a, dim, index), alpha * source)
    return out


def _r_index_copy(a, dim, index, source):
    out = a.copy()
    out[_r_index_sl(a, dim, index)] = source
    return out


def _r_index_fill(a, dim, index, value):
    out = a.copy()
    out[_r_index_sl(a, dim, index)] = value
    return out


def _r_take_along_dim(x, idx, dim=None):
    if dim is None:
        return np.take_along_axis(x.ravel(), idx.ravel(), 0)
    return np.take_along_axis(x, idx, dim)


def _r_masked_scatter(x, mask, source):
    out = x.copy()
    m = np.broadcast_to(mask, x.shape)
    out[m] = source.ravel()[: m.sum()]
    return out


def _r_put(x, index, source, accumulate=False):
    out = x.copy().ravel()
    if accumulate:
        np.add.at(out, index.ravel(), source.ravel())
    else:
        out[index.ravel()] = source.ravel()
    return out.reshape(x.shape)


def s_scatter(m):
    return [
        SampleInput(m((3, 4)), (1, _idx([[0, 2], [3, 1], [2, 2]][:2] + [[1, 0]]), m((3, 2))), {}, "dim 1"),
        SampleInput(m((3, 2)), (0, _idx([[2, 0], [0, 1]]), m((3, 3))), {}, "dim 0, larger src"),
        SampleInput(m((4,)), (0, _idx([3, 0]), 1.5), {}, "value"),
        SampleInput(m((2, 3)), (1, _idx([[0], [2]]), m(())), {}, "0-d src tensor"),
    ]


def s_scatter_add(m):
    return [
        SampleInput(m((3, 4)), (1, _idx([[0, 0], [3, 1], [2, 2]]), m((3, 2))), {}, "duplicates"),
        SampleInput(m((3, 2)), (0, _idx([[2, 0], [2, 1]]), m((2, 2))), {}, "dim 0"),
        SampleInput(m((4,)), (0, _idx([3, 3, 3]), m((4,))), {}, "larger src"),
    ]


def s_scatter_reduce(m):
    out = []
    idx = _idx([[0, 0, 2], [1, 3, 1]])
    for red in ("sum", "prod", "mean", "amax", "amin"):
        lo = {"low": 0.5, "high": 2.0} if red == "prod" else {}
        out.append(SampleInput(m((2, 4), **lo), (1, idx, m((2, 3), **lo), red), {}, f"{red}"))
        out.append(
            SampleInput(m((2, 4), **lo), (1, idx, m((2, 3), **lo), red), {"include_self": False}, f"{red} exclude self")
        )
    return out


def s_index_add(m):
    return [
        SampleInput(m((3, 2)), (0, _idx([0, 2, 0]), m((3, 2))), {}, "duplicates"),
        SampleInput(m((2, 3)), (1, _idx([2]), m((2, 1))), {"alpha": 2.5}, "alpha"),
        SampleInput(m((4,)), (0, _idx([1, 3]), m((2,))), {}, "1-d"),
    ]


def s_index_copy(m):
    return [
        SampleInput(m((3, 2)), (0, _idx([2, 0]), m((2, 2))), {}, "rows"),
        SampleInput(m((2, 3)), (1, _idx([1]), m((2, 1))), {}, "dim 1"),
    ]


def s_index_fill(m):
    return [
        SampleInput(m((3, 2)), (0, _idx([2, 0]), 1.5), {}, "number"),
        SampleInput(m((2, 3)), (1, _idx([1, 1]), m(())), {}, "0-d tensor value"),
    ]


def s_take(m):
    return [
        SampleInput(m((2, 3)), (_idx([0, 5, 5]),), {}, "flat"),
        SampleInput(m((2, 2)), (_idx([[3, 0], [-1, 1]]),), {}, "2-d index, negative"),
    ]


def s_take_along_dim(m):
    return [
        SampleInput(m((2, 3)), (_idx([[0, 2], [1, 1]]), 1), {}, "dim 1"),
        SampleInput(m((3, 2)), (_idx([[2], [0], [1]]), 0), {}, "broadcast"),
        SampleInput(m((2, 3)), (_idx([4, 0]),), {}, "flattened"),
    ]


def s_masked_select(m):
    return [
        SampleInput(m((2, 3)), (m.mask((2, 3)),), {}, "same"),
        SampleInput(m((2, 3)), (m.mask((3,)),), {}, "broadcast"),
    ]


def s_masked_scatter(m):
    return [
        SampleInput(
            m((2, 3)), (_leaf(np.array([[True, False, True], [False, True, False]])), m((4,))), {}, "longer source"
        ),
        SampleInput(m((2, 3)), (_leaf(np.array([True, False, True])), m((2, 3))), {}, "broadcast mask"),
    ]


def s_put(m):
    return [
        SampleInput(m((2, 3)), (_idx([0, 4]), m((2,))), {}, "plain"),
        SampleInput(m((2, 2)), (_idx([1, 1, 3]), m((3,)), True), {}, "accumulate"),
    ]


def _group3(add):
    add(OpInfo("scatter", _fn("scatter"), s_scatter, _r_scatter, REAL_COMPLEX, inplace="scatter_"))
    add(
        OpInfo(
            "scatter_add",
            _fn("scatter_add"),
            s_scatter_add,
            lambda a, d, i, s: _r_scatter_reduce(a, d, i, s),
            REAL_COMPLEX,
            inplace="scatter_add_",
        )
    )
    add(
        OpInfo(
            "scatter_reduce",
            _fn("scatter_reduce"),
            s_scatter_reduce,
            _r_scatter_reduce,
            REAL,
            inplace="scatter_reduce_",
        )
    )
    add(OpInfo("index_add", _fn("index_add"), s_index_add, _r_index_add, REAL_COMPLEX, inplace="index_add_"))
    add(OpInfo("index_copy", _fn("index_copy"), s_index_copy, _r_index_copy, REAL_COMPLEX, inplace="index_copy_"))
    add(OpInfo("index_fill", _fn("index_fill"), s_index_fill, _r_index_fill, REAL_COMPLEX, inplace="index_fill_"))
    add(OpInfo("take", _fn("take"), s_take, lambda x, i: np.take(x, i), REAL_COMPLEX, composite=True))
    add(OpInfo("take_along_dim", _fn("take_along_dim"), s_take_along_dim, _r_take_along_dim, REAL, composite=True))
    add(
        OpInfo(
            "masked_select",
            _fn("masked_select"),
            s_masked_select,
            lambda x, mk: np.broadcast_to(x, np.broadcast_shapes(x.shape, mk.shape))[
                np.broadcast_to(mk, np.broadcast_shapes(x.shape, mk.shape))
            ],
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "masked_scatter",
            _fn("masked_scatter"),
            s_masked_scatter,
            _r_masked_scatter,
            REAL_COMPLEX,
            composite=True,
            inplace="masked_scatter_",
        )
    )
    add(OpInfo("put", _fn("put"), s_put, _r_put, REAL_COMPLEX, composite=True, inplace="put_"))


# -- samples: pf.nn.functional ---------------------------------------------------------------------------
# Values are compared with torch.nn.functional in tests/test_nn.py (ref=None here: no NumPy twin).


def _nn(name):
    """F.<name>, called with float ndarrays in a sample turned into (constant) tensors: a sample holds
    its non-differentiable float arguments (running stats, class weights) as ndarrays, so gradcheck
    does not treat them as inputs."""
    fn = getattr(F, name)

    def conv(v):
        return as_tensor(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v

    def call(*args, **kwargs):
        return fn(*[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()})

    call.__name__ = name
    return call


def _pos(m, shape, lo=0.2, hi=1.5):
    return m(shape, low=lo, high=hi)


def s_linear(m):
    return [
        SampleInput(m((2, 3)), (m((4, 3)), m((4,))), {}, "bias"),
        SampleInput(m((3,)), (m((2, 3)),), {}, "1-d, no bias"),
    ]


def s_bilinear(m):
    return [
        SampleInput(m((2, 3)), (m((2, 2)), m((2, 3, 2)), m((2,))), {}, "bias"),
        SampleInput(m((3,)), (m((2,)), m((1, 3, 2))), {}, "unbatched"),
    ]


def s_conv1d(m):
    return [
        SampleInput(m((1, 2, 5)), (m((2, 2, 3)), m((2,))), {"stride": 2, "padding": 1}, "stride padding"),
        SampleInput(m((1, 2, 5)), (m((2, 1, 2)),), {"groups": 2, "dilation": 2}, "groups dilation"),
        SampleInput(m((2, 4)), (m((1, 2, 2)),), {"padding": "same"}, "unbatched same"),
    ]


def s_conv2d(m):
    return [
        SampleInput(m((1, 2, 4, 4)), (m((2, 2, 2, 2)), m((2,))), {}, "bias"),
        SampleInput(
            m((1, 2, 4, 3)), (m((2, 1, 2, 2)),), {"stride": (2, 1), "padding": 1, "groups": 2}, "stride padding groups"
        ),
        SampleInput(m((1, 1, 4, 4)), (m((1, 1, 2, 2)),), {"padding": "same", "dilation": 2}, "same dilation"),
    ]


def s_conv3d(m):
    return [
        SampleInput(m((1, 1, 3, 3, 2)), (m((2, 1, 2, 2, 1)), m((2,))), {}, "bias"),
        SampleInput(m((1, 2, 2, 2)), (m((1, 1, 1, 2, 2)),), {"padding": (0, 1, 0)}, "unbatched"),
    ]


def s_conv_transpose1d(m):
    return [
        SampleInput(m((1, 2, 3)), (m((2, 1, 2)), m((1,))), {"stride": 2}, "stride bias"),
        SampleInput(
            m((1, 2, 3)),
            (m((2, 1, 3)),),
            {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
            "groups output_padding",
        ),
        SampleInput(m((2, 3)), (m((2, 1, 2)),), {"dilation": 2}, "unbatched dilation"),
    ]


def s_conv_transpose2d(m):
    return [
        SampleInput(m((1, 2, 2, 2)), (m((2, 1, 2, 2)), m((1,))), {"stride": 2}, "stride bias"),
        SampleInput(
            m((1, 1, 2, 2)), (m((1, 2, 3, 3)),), {"stride": 2, "padding": 1, "output_padding": 1}, "output_padding"
        ),
    ]


def s_conv_transpose3d(m):
    return [SampleInput(m((1, 1, 2, 1, 2)), (m((1, 1, 2, 2, 1)),), {}, "plain")]


def s_unfold(m):
    return [
        SampleInput(m((1, 2, 3, 3)), (2,), {}, "k=2"),
        SampleInput(m((1, 1, 3, 4)), ((2, 3),), {"padding": 1, "stride": 2}, "pad stride"),
    ]


def s_fold(m):
    return [
        SampleInput(m((1, 4, 4)), ((3, 3), 2), {}, "k=2"),
        SampleInput(m((1, 4, 6)), ((3, 3), (2, 1)), {"padding": (0, 1), "stride": (1, 2)}, "pad stride"),
    ]


def s_max_pool1d(m):
    return [
        SampleInput(m((1, 2, 5)), (2,), {}, "k=2"),
        SampleInput(m((1, 1, 6)), (3, 2, 1), {"ceil_mode": True, "return_indices": True}, "ceil indices"),
        SampleInput(m((2, 5)), (2, 1), {"dilation": 2}, "unbatched dilation"),
    ]


def s_max_pool2d(m):
    return [
        SampleInput(m((1, 1, 4, 4)), (2,), {}, "k=2"),
        SampleInput(m((1, 2, 5, 5)), (3, 2, 1), {"ceil_mode": True, "return_indices": True}, "ceil indices"),
        SampleInput(m((1, 3, 4)), ((2, 1),), {"stride": 1, "dilation": (1, 2)}, "unbatched dilation"),
    ]


def s_max_pool3d(m):
    return [SampleInput(m((1, 1, 2, 3, 3)), (2,), {"stride": 1}, "k=2 s=1")]


def s_avg_pool1d(m):
    return [
        SampleInput(m((1, 2, 5)), (2,), {}, "k=2"),
        SampleInput(m((1, 1, 6)), (3, 2, 1), {"ceil_mode": True}, "ceil"),
        SampleInput(m((1, 1, 5)), (3, 2, 1), {"count_include_pad": False}, "exclude pad"),
    ]


def s_avg_pool2d(m):
    return [
        SampleInput(m((1, 1, 4, 4)), (2,), {}, "k=2"),
        SampleInput(m((1, 2, 5, 5)), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, "ceil exclude pad"),
        SampleInput(m((1, 3, 3)), (2, 1), {"divisor_override": 3}, "divisor"),
    ]


def s_avg_pool3d(m):
    return [SampleInput(m((1, 1, 2, 3, 3)), (2,), {"stride": 1, "padding": 1}, "pad")]


def s_adaptive1d(m):
    return [SampleInput(m((1, 2, 5)), (3,), {}, "5->3"), SampleInput(m((2, 4)), (2,), {}, "unbatched")]


def s_adaptive2d(m):
    return [SampleInput(m((1, 1, 5, 4)), ((2, 3),), {}, "(2, 3)"), SampleInput(m((1, 3, 3)), ((None, 2),), {}, "None")]


def s_adaptive3d(m):
    return [SampleInput(m((1, 1, 3, 2, 3)), (2,), {}, "2")]


def s_adaptive_max(m, nd):
    shape = {1: (1, 2, 5), 2: (1, 1, 5, 4)}[nd]
    return [SampleInput(m(shape), (3,), {}, "3"), SampleInput(m(shape), (2,), {"return_indices": True}, "indices")]


def s_interpolate(m):
    return [
        SampleInput(m((1, 1, 3)), (5,), {}, "nearest size"),
        SampleInput(m((1, 2, 3)), (), {"scale_factor": 2.0}, "nearest scale"),
        SampleInput(m((1, 1, 3)), (4,), {"mode": "nearest-exact"}, "nearest-exact"),
        SampleInput(m((1, 1, 3)), (5,), {"mode": "linear", "align_corners": True}, "linear align"),
        SampleInput(m((1, 1, 4)), (), {"scale_factor": 1.5, "mode": "linear"}, "linear scale"),
        SampleInput(m((1, 1, 2, 3)), ((3, 4),), {"mode": "bilinear"}, "bilinear"),
        SampleInput(m((1, 1, 2, 2)), ((3, 3),), {"mode": "bilinear", "align_corners": True}, "bilinear align"),
        SampleInput(m((1, 1, 2, 2, 2)), (3,), {"mode": "trilinear"}, "trilinear"),
        SampleInput(m((1, 1, 4, 4)), ((2, 3),), {"mode": "area"}, "area"),
    ]


def s_pad(m):
    return [
        SampleInput(m((2, 3)), ((1, 2),), {}, "constant"),
        SampleInput(m((2, 3)), ((1, 0, 0, 1),), {"value": 1.5}, "value"),
        SampleInput(m((2, 4)), ((-1, 1),), {}, "negative"),
        SampleInput(m((1, 2, 4)), ((2, 1),), {"mode": "reflect"}, "reflect"),
        SampleInput(m((1, 1, 3, 3)), ((1, 1, 2, 0),), {"mode": "replicate"}, "replicate"),
        SampleInput(m((1, 1, 3)), ((1, 2),), {"mode": "circular"}, "circular"),
    ]


def s_pixel_shuffle(m):
    return [SampleInput(m((1, 4, 2, 2)), (2,)), SampleInput(m((8, 1, 1)), (2,), {}, "unbatched")]


def s_pixel_unshuffle(m):
    return [SampleInput(m((1, 1, 4, 2)), (2,)), SampleInput(m((2, 2, 2)), (2,), {}, "unbatched")]


def s_layer_norm(m):
    return [
        SampleInput(m((2, 3)), ((3,), m((3,)), m((3,))), {}, "affine"),
        SampleInput(m((2, 2, 3)), ((2, 3),), {}, "2 dims"),
        SampleInput(m((4,)), ([4],), {"eps": 1e-3}, "eps"),
    ]


def s_rms_norm(m):
    return [
        SampleInput(m((2, 3)), ((3,), m((3,))), {}, "weight"),
        SampleInput(m((2, 2, 3)), ((2, 3),), {"eps": 1e-3}, "eps"),
    ]


def s_group_norm(m):
    return [
        SampleInput(m((2, 4, 3)), (2, m((4,)), m((4,))), {}, "affine"),
        SampleInput(m((1, 2, 2, 2)), (1,), {}, "one group"),
    ]


def s_batch_norm(m):
    return [
        SampleInput(m((4, 2)), (np.zeros(2, m.dtype), np.ones(2, m.dtype), m((2,)), m((2,)), True), {}, "training"),
        SampleInput(m((3, 2, 2)), (None, None), {"training": True}, "training, no running stats"),
        SampleInput(m((3, 2, 2)), (np.array([0.1, -0.2], m.dtype), np.array([0.5, 2.0], m.dtype), m((2,))), {}, "eval"),
    ]


def s_instance_norm(m):
    return [
        SampleInput(m((2, 2, 3)), (), {}, "plain"),
        SampleInput(m((1, 2, 2, 2)), (None, None, m((2,)), m((2,))), {}, "affine"),
        SampleInput(m((2, 2, 3)), (np.zeros(2, m.dtype), np.ones(2, m.dtype)), {}, "running stats"),
    ]


def s_dropout(m):
    return [
        SampleInput(m((2, 3)), (0.0,), {}, "p=0"),
        SampleInput(m((3,)), (0.5, False), {}, "eval"),
        SampleInput(m((3,)), (1.0,), {}, "p=1"),
    ]


def s_embedding(m):
    return [
        SampleInput(_idx([[0, 2], [3, 2]]), (m((4, 3)),), {}, "2-d index"),
        # the padding row gets no gradient although the value depends on it (torch's rule): no gradcheck;
        # tests/test_nn.py compares its gradient with torch
        SampleInput(_idx([1, 0, 1]), (m((3, 2)),), {"padding_idx": 1}, "padding_idx", grad=False),
    ]


def s_one_hot(m):
    return [SampleInput(_idx([0, 2, 1]), (), {}, "inferred"), SampleInput(_idx([[0], [1]]), (4,), {}, "num_classes")]


def s_normalize(m):
    return [SampleInput(m((2, 3))), SampleInput(m((2, 3)), (1.0, 0), {}, "p=1 dim 0")]


def s_cosine_similarity(m):
    return [SampleInput(m((2, 3)), (m((2, 3)),)), SampleInput(m((2, 3)), (m((3,)), -1), {}, "broadcast dim -1")]


def s_pairwise_distance(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)),)),
        SampleInput(m((2, 3)), (m((2, 3)), 1.0), {"keepdim": True}, "p=1 keepdim"),
    ]


def s_act(m, args=(), kwargs=None, wide=False):
    out = _unary(m, args, kwargs)
    if wide:
        out.append(SampleInput(m((6,), low=-5.0, high=5.0), args, dict(kwargs or {}), "wide"))
    return out


def s_softplus(m):
    return s_act(m) + [SampleInput(m((4,), low=-3.0, high=3.0), (2.0, 1.0), {}, "beta threshold")]


def s_glu(m):
    return [SampleInput(m((2, 4))), SampleInput(m((4, 3)), (0,), {}, "dim 0")]


def s_prelu(m):
    return [SampleInput(m((2, 3, 2)), (m((3,)),), {}, "per channel"), SampleInput(m((4,)), (m((1,)),), {}, "shared")]


def s_softmin(m):
    return [SampleInput(m((2, 3)), (1,)), SampleInput(m((3,)), (0,))]


def s_threshold(m):
    return [SampleInput(m((2, 3)), (0.5, -1.0)), SampleInput(m((4,)), (-0.5, 2.0))]


def _reductions(m, shape, extra=None, **kw):
    out = []
    for red in ("mean", "sum", "none"):
        out.append(SampleInput(m(shape), (m(shape, **kw),), dict(extra or {}, reduction=red), red))
    return out


def s_pointwise_loss(m):
    return _reductions(m, (2, 3)) + [SampleInput(m((3,)), (m((3,)),), {"weight": m((3,), low=0.2, high=1.0)}, "weight")]


def s_smooth_l1(m):
    return _reductions(m, (2, 3)) + [SampleInput(m((4,)), (m((4,)),), {"beta": 0.5}, "beta")]


def s_huber(m):
    return [SampleInput(m((2, 3)), (m((2, 3)),), {}, "mean"), SampleInput(m((4,)), (m((4,)), "sum", 0.5), {}, "delta")]


def s_cross_entropy(m):
    t = _idx([0, 3, 1])
    return [
        SampleInput(m((3, 4)), (t,), {}, "indices"),
        SampleInput(
            m((3, 4)),
            (t,),
            {"weight": np.array([0.5, 1.0, 1.5, 0.7], m.dtype), "label_smoothing": 0.2},
            "weight smoothing",
        ),
        SampleInput(m((3, 4)), (_idx([0, -100, 1]),), {"ignore_index": -100, "reduction": "sum"}, "ignore sum"),
        SampleInput(m((3, 4)), (_idx([0, 2, 1]),), {"label_smoothing": 0.1, "reduction": "none"}, "smoothing none"),
        SampleInput(m((3, 4)), (m((3, 4), low=0.0, high=1.0),), {"label_smoothing": 0.1}, "probabilities"),
        SampleInput(m((2, 3, 2)), (_idx([[0, 2], [1, 1]]),), {}, "K-dim"),
        SampleInput(m((4,)), (_idx(2),), {}, "1-d"),
    ]


def s_nll_loss(m):
    return [
        SampleInput(m((3, 4)), (_idx([0, 3, 1]),), {}, "mean"),
        SampleInput(
            m((3, 4)),
            (_idx([0, 3, 1]),),
            {"weight": np.array([0.5, 1.0, 1.5, 0.7], m.dtype), "ignore_index": 3},
            "weight ignore",
        ),
        SampleInput(m((2, 3, 2)), (_idx([[0, 2], [1, 1]]),), {"reduction": "none"}, "K-dim none"),
    ]


def s_bce(m):
    return [
        SampleInput(m((2, 3), low=0.1, high=0.9), (m((2, 3), low=0.0, high=1.0),), {}, "mean"),
        SampleInput(
            m((3,), low=0.1, high=0.9),
            (m((3,), low=0.0, high=1.0), np.array([0.5, 1.0, 0.8], m.dtype)),
            {"reduction": "sum"},
            "weight sum",
        ),
    ]


def s_bce_logits(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3), low=0.0, high=1.0),), {}, "mean"),
        SampleInput(
            m((3,)),
            (m((3,), low=0.0, high=1.0),),
            {"pos_weight": np.array([0.5, 2.0, 1.0], m.dtype), "reduction": "none"},
            "pos_weight",
        ),
    ]


def s_kl_div(m):
    return [
        SampleInput(m((2, 3)), (_pos(m, (2, 3), 0.1, 1.0),), {"reduction": "batchmean"}, "batchmean"),
        SampleInput(m((3,)), (m((3,)),), {"log_target": True, "reduction": "sum"}, "log target"),
        SampleInput(m((3,)), (_pos(m, (3,), 0.1, 1.0),), {}, "mean"),
    ]


def s_sdpa(m):
    return [
        SampleInput(m((2, 3)), (m((3, 3)), m((3, 2))), {}, "plain"),
        SampleInput(m((3, 2)), (m((3, 2)), m((3, 2))), {"is_causal": True}, "causal"),
        SampleInput(
            m((2, 2)),
            (m((3, 2)), m((3, 2))),
            {"attn_mask": _leaf(np.array([[True, False, True], [True, True, False]]))},
            "bool mask",
        ),
        SampleInput(
            m((1, 2, 2)), (m((1, 2, 2)), m((1, 2, 1))), {"attn_mask": m((2, 2)), "scale": 0.3}, "float mask, scale"
        ),
    ]


_ACTIVATIONS = {
    # name: (args, kwargs, wide samples beyond the default range)
    "relu6": ((), {}, True),
    "elu": ((), {"alpha": 0.7}, False),
    "selu": ((), {}, False),
    "celu": ((), {"alpha": 1.5}, False),
    "silu": ((), {}, False),
    "mish": ((), {}, False),
    "softsign": ((), {}, False),
    "hardtanh": ((-0.5, 1.5), {}, False),
    "hardsigmoid": ((), {}, True),
    "hardswish": ((), {}, True),
    "leaky_relu": ((0.2,), {}, False),
    "logsigmoid": ((), {}, True),
    "tanhshrink": ((), {}, False),
    "softshrink": ((0.3,), {}, False),
    "hardshrink": ((0.3,), {}, False),
}


def _r_im2col(x, kernel_size, dilation, padding, stride, pad_value=0.0):
    """Window by window with explicit loops (an independent route to kernels_window.im2col)."""
    nd = len(kernel_size)
    pads = (
        [(p, p) for p in padding] if len(padding) == nd else [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)]
    )
    xp = np.pad(x, [(0, 0), (0, 0)] + pads, constant_values=pad_value)
    outs = [(xp.shape[2 + i] - dilation[i] * (kernel_size[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(kernel_size) + tuple(outs), x.dtype)
    for kk in itertools.product(*[range(k) for k in kernel_size]):
        for oo in itertools.product(*[range(o) for o in outs]):
            pos = tuple(oo[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
            out[(slice(None), slice(None)) + kk + oo] = xp[(slice(None), slice(None)) + pos]
    return out


def _r_col2im(cols, output_size, kernel_size, dilation, padding, stride):
    nd = len(kernel_size)
    pads = (
        [(p, p) for p in padding] if len(padding) == nd else [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)]
    )
    size = [output_size[i] + pads[i][0] + pads[i][1] for i in range(nd)]
    out = np.zeros(cols.shape[:2] + tuple(size), cols.dtype)
    outs = cols.shape[2 + nd :]
    for kk in itertools.product(*[range(k) for k in kernel_size]):
        for oo in itertools.product(*[range(o) for o in outs]):
            pos = tuple(oo[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
            out[(slice(None), slice(None)) + pos] += cols[(slice(None), slice(None)) + kk + oo]
    return out[(slice(None), slice(None)) + tuple(slice(pads[i][0], pads[i][0] + output_size[i]) for i in range(nd))]


def s_im2col(m):
    return [
        SampleInput(m((1, 2, 4)), ((2,), (1,), (1,), (2,)), {}, "1-d pad stride"),
        SampleInput(m((1, 1, 3, 4)), ((2, 2), (1, 2), (0, 0, 1, 0), (1, 1)), {}, "2-d dilation, low/high pad"),
        SampleInput(m((1, 1, 3, 3)), ((2, 2), (1, 1), (1, 1), (2, 2)), {"pad_value": -1.5}, "pad value"),
    ]


def s_col2im(m):
    return [
        SampleInput(m((1, 2, 2, 3)), ((4,), (2,), (1,), (1,), (2,)), {}, "1-d pad stride"),
        SampleInput(
            m((1, 1, 2, 2, 2, 3)), ((3, 4), (2, 2), (1, 2), (0, 0, 1, 0), (1, 1)), {}, "2-d dilation, low/high pad"
        ),
    ]


def _pm1(m, shape):
    return _leaf(np.where(m.rng.random(shape) < 0.5, -1.0, 1.0).astype(m.dtype))


def s_soft_margin(m):
    # target as an ndarray: not differentiated (as torch)
    return [
        SampleInput(m((2, 3)), (np.asarray(_pm1(m, (2, 3))._data),), {}, "mean"),
        SampleInput(m((3,)), (np.asarray(_pm1(m, (3,))._data), None, None, "sum"), {}, "sum"),
    ]


def s_margin_ranking(m):
    return [
        SampleInput(m((4,)), (m((4,)), _pm1(m, (4,))), {"margin": 0.3}, "margin"),
        SampleInput(m((3,)), (m((3,)), _pm1(m, (3,))), {"reduction": "none"}, "none"),
    ]


def s_hinge_embedding(m):
    return [
        SampleInput(m((4,)), (_pm1(m, (4,)),), {"margin": 0.7}, "margin"),
        SampleInput(m((2, 2)), (_pm1(m, (2, 2)),), {"reduction": "sum"}, "sum"),
    ]


def s_poisson_nll(m):
    return [
        SampleInput(m((4,)), (_pos(m, (4,), 0.0, 3.0),), {}, "log input"),
        SampleInput(_pos(m, (4,)), (_pos(m, (4,), 0.5, 3.0),), {"log_input": False, "full": True}, "full"),
    ]


def s_gaussian_nll(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)), _pos(m, (2, 3))), {}, "mean"),
        SampleInput(m((2, 3)), (m((2, 3)), _pos(m, (2,))), {"full": True, "reduction": "sum"}, "one var per sample"),
    ]


def s_cosine_embedding(m):
    return [
        SampleInput(m((3, 2)), (m((3, 2)), _leaf(np.array([1.0, -1.0, -1.0]))), {"margin": -0.5}, "margin"),
        SampleInput(m((2, 3)), (m((2, 3)), _leaf(np.array([1.0, -1.0]))), {"reduction": "sum"}, "sum"),
    ]


def s_triplet(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)), m((2, 3))), {"margin": 2.0}, "margin"),
        SampleInput(m((2, 3)), (m((2, 3)), m((2, 3))), {"p": 1.0, "swap": True, "margin": 3.0}, "p=1 swap"),
    ]


def s_multilabel_soft_margin(m):
    return [
        SampleInput(m((2, 3)), (_leaf((m.rng.random((2, 3)) < 0.5).astype(m.dtype)),), {}, "mean"),
        SampleInput(
            m((2, 3)),
            (_leaf((m.rng.random((2, 3)) < 0.5).astype(m.dtype)), np.array([0.5, 1.0, 2.0], m.dtype)),
            {"reduction": "none"},
            "weight",
        ),
    ]


def s_pdist(m):
    return [SampleInput(m((3, 2))), SampleInput(m((4, 3)), (1.0,), {}, "p=1")]


def s_channel_dropout(m, nd):
    shape = (1, 2) + (2,) * nd
    return [
        SampleInput(m(shape), (0.0,), {}, "p=0"),
        SampleInput(m(shape[1:]), (0.5, False), {}, "eval unbatched"),
        SampleInput(m(shape), (1.0,), {}, "p=1"),
    ]


def s_channel_shuffle(m):
    return [SampleInput(m((1, 4, 2)), (2,)), SampleInput(m((2, 6, 1, 1)), (3,), {}, "4-d")]


def _nn_adder(add):
    """add() for a pf.nn.functional composite: nn(name, sample_fn, dtypes=REAL, **OpInfo fields)."""

    def nn(name, sample_fn, dtypes=REAL, **kw):
        add(OpInfo(name, _nn(name), sample_fn, None, dtypes, composite=True, **kw))

    return nn


def _group4(add):
    """im2col/col2im, activations, linear layers, convolutions, pooling, resampling."""
    add(OpInfo("_im2col", _fn("_im2col"), s_im2col, _r_im2col, REAL_COMPLEX))
    add(OpInfo("_col2im", _fn("_col2im"), s_col2im, _r_col2im, REAL_COMPLEX))
    nn = _nn_adder(add)
    for name, (args, kwargs, wide) in _ACTIVATIONS.items():
        nn(name, lambda m, a=args, k=kwargs, w=wide: s_act(m, a, k, w))
    nn("gelu", lambda m: s_act(m) + [SampleInput(m((2, 3)), (), {"approximate": "tanh"}, "tanh")])
    nn("softplus", s_softplus)
    nn("glu", s_glu)
    nn("prelu", s_prelu)
    nn("softmin", s_softmin)
    nn("threshold", s_threshold)
    nn("linear", s_linear)
    nn("bilinear", s_bilinear)
    nn("conv1d", s_conv1d)
    nn("conv2d", s_conv2d)
    nn("conv3d", s_conv3d)
    nn("conv_transpose1d", s_conv_transpose1d)
    nn("conv_transpose2d", s_conv_transpose2d)
    nn("conv_transpose3d", s_conv_transpose3d)
    nn("unfold", s_unfold)
    nn("fold", s_fold)
    nn("max_pool1d", s_max_pool1d)
    nn("max_pool2d", s_max_pool2d)
    nn("max_pool3d", s_max_pool3d)
    nn("avg_pool1d", s_avg_pool1d)
    nn("avg_pool2d", s_avg_pool2d)
    nn("avg_pool3d", s_avg_pool3d)
    nn("adaptive_avg_pool1d", s_adaptive1d)
    nn("adaptive_avg_pool2d", s_adaptive2d)
    nn("adaptive_avg_pool3d", s_adaptive3d)
    nn("adaptive_max_pool1d", lambda m: s_adaptive_max(m, 1))
    nn("adaptive_max_pool2d", lambda m: s_adaptive_max(m, 2))
    nn("interpolate", s_interpolate)
    nn("pad", s_pad)
    nn("pixel_shuffle", s_pixel_shuffle)
    nn("pixel_unshuffle", s_pixel_unshuffle)


def _group5(add):
    """Normalization, dropout, embeddings, distances and losses."""
    nn = _nn_adder(add)
    nn("layer_norm", s_layer_norm)
    nn("rms_norm", s_rms_norm)
    nn("group_norm", s_group_norm)
    nn("batch_norm", s_batch_norm)
    nn("instance_norm", s_instance_norm)
    nn("dropout", s_dropout)
    nn("embedding", s_embedding)
    nn("one_hot", s_one_hot, (np.dtype(np.int64),), differentiable=False)
    nn("normalize", s_normalize)
    nn("cosine_similarity", s_cosine_similarity)
    nn("pairwise_distance", s_pairwise_distance)
    nn("mse_loss", s_pointwise_loss)
    nn("l1_loss", s_pointwise_loss)
    nn("smooth_l1_loss", s_smooth_l1)
    nn("huber_loss", s_huber)
    nn("cross_entropy", s_cross_entropy)
    nn("nll_loss", s_nll_loss)
    nn("binary_cross_entropy", s_bce)
    nn("binary_cross_entropy_with_logits", s_bce_logits)
    nn("kl_div", s_kl_div)
    nn("scaled_dot_product_attention", s_sdpa)
    nn("soft_margin_loss", s_soft_margin)
    nn("margin_ranking_loss", s_margin_ranking)
    nn("hinge_embedding_loss", s_hinge_embedding)
    nn("poisson_nll_loss", s_poisson_nll)
    nn("gaussian_nll_loss", s_gaussian_nll)
    nn("cosine_embedding_loss", s_cosine_embedding)
    nn("triplet_margin_loss", s_triplet)
    nn("multilabel_soft_margin_loss", s_multilabel_soft_margin)
    nn("pdist", s_pdist)
    for nd in (1, 2, 3):
        nn(f"dropout{nd}d", lambda m, nd=nd: s_channel_dropout(m, nd))
    nn("channel_shuffle", s_channel_shuffle)


def register(add: Callable) -> None:
    """Add the breadth ops' entries (composites, shape, sort, scatter, nn) to the op database."""
    _group1(add)
    _group2(add)
    _group3(add)
    _group4(add)
    _group5(add)
