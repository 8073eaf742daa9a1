"""Op-database entries of issue 13: composites and shape ops, sorting and scans, scatter and
indexing, and pf.nn.functional. `register(add)` is called by opdb._build.

Samples stay small (a few elements per input) so gradcheck's full Jacobians are cheap, and
values of ops with kinks (sort ties, max pooling, quantile steps) are drawn apart.
"""
from __future__ import annotations

import numpy as np

from .._generated import ops
from .opdb import C128, F32, F64, REAL, REAL_COMPLEX, OpInfo, SampleInput, _leaf

__all__ = ["register"]


def _fn(name):
    return getattr(ops, name)


def _method(name):
    def call(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    call.__name__ = name
    return call


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
    from scipy.linalg import block_diag
    return block_diag(*[np.atleast_2d(t) for t in ts])


def _r_cdist(a, b, p=2.0):
    return np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], ord=p, axis=-1)


def _r_meshgrid(*ts, indexing="ij"):
    return tuple(np.meshgrid(*ts, indexing=indexing))


# -- samples: composites and shape ---------------------------------------------------------------------

def s_addmm(m):
    return [SampleInput(m((2, 3)), (m((2, 4)), m((4, 3))), {}, "plain"),
            SampleInput(m((3,)), (m((2, 2)), m((2, 3))), {"beta": 0.5, "alpha": 2.0}, "broadcast self, beta alpha"),
            SampleInput(m((2, 3)), (m((2, 1)), m((1, 3))), {"beta": 0}, "beta=0")]


def s_addmv(m):
    return [SampleInput(m((2,)), (m((2, 3)), m((3,))), {}, "plain"),
            SampleInput(m(()), (m((2, 3)), m((3,))), {"beta": -1.0, "alpha": 0.5}, "0-d self")]


def s_addbmm(m):
    return [SampleInput(m((2, 3)), (m((2, 2, 2)), m((2, 2, 3))), {}, "plain"),
            SampleInput(m((2, 1)), (m((3, 2, 1)), m((3, 1, 2))), {"beta": 2.0, "alpha": -1.0}, "beta alpha")]


def s_baddbmm(m):
    return [SampleInput(m((2, 2, 3)), (m((2, 2, 2)), m((2, 2, 3))), {}, "plain"),
            SampleInput(m((3,)), (m((2, 1, 2)), m((2, 2, 3))), {"beta": 0.5, "alpha": 2.0}, "broadcast")]


def s_addc(m):
    lo = {"low": 0.5, "high": 2.0}
    return [SampleInput(m((2, 3)), (m((2, 3)), m((2, 3), **lo)), {}, "plain"),
            SampleInput(m((3,)), (m((2, 1)), m((2, 3), **lo)), {"value": -0.5}, "broadcast, value")]


def s_lerp(m):
    return [SampleInput(m((2, 3)), (m((2, 3)), 0.3), {}, "scalar weight"),
            SampleInput(m((2, 3)), (m((3,)), m((2, 1), low=0.0, high=1.0)), {}, "tensor weight"),
            SampleInput(m(()), (m(()), 0.7), {}, "0-d")]


def s_mv(m):
    return [SampleInput(m((2, 3)), (m((3,)),)), SampleInput(m((1, 1)), (m((1,)),), {}, "1x1")]


def s_vdot(m):
    return [SampleInput(m((3,)), (m((3,)),)), SampleInput(m((1,)), (m((1,)),), {}, "1")]


def s_repeat(m):
    return [SampleInput(m((2, 3)), (2, 1)), SampleInput(m((3,)), (2, 2), {}, "new dims"),
            SampleInput(m(()), (3,), {}, "0-d"), SampleInput(m((2,)), ((1, 2, 2),), {}, "tuple")]


def s_tile(m):
    return [SampleInput(m((2, 3)), ((2,),), {}, "fewer dims"), SampleInput(m((3,)), ((2, 2),), {}, "more dims"),
            SampleInput(m((2, 2)), (1, 2), {}, "varargs")]


def s_repeat_interleave(m):
    return [SampleInput(m((3,)), (2,)), SampleInput(m((2, 3)), (_idx([1, 0, 2]), 1), {}, "tensor repeats"),
            SampleInput(m((2, 2)), (2,), {}, "flattened"), SampleInput(m((2, 3)), (2, 0), {}, "dim=0")]


def s_movedim(m):
    return [SampleInput(m((2, 3, 4)), (0, -1)), SampleInput(m((2, 3, 4)), ((0, 1), (2, 0)), {}, "two dims"),
            SampleInput(m((2, 3)), (1, 0))]


def s_unflatten(m):
    return [SampleInput(m((6,)), (0, (2, 3))), SampleInput(m((2, 6)), (-1, (3, -1)), {}, "-1")]


def s_meshgrid(m):
    return [SampleInput(m((2,)), (m((3,)),), {}, "ij"), SampleInput(m((2,)), (m((3,)), m(())), {}, "three"),
            SampleInput(m((2,)), (m((3,)),), {"indexing": "xy"}, "xy")]


def s_broadcast_tensors(m):
    return [SampleInput(m((2, 1)), (m((3,)),)), SampleInput(m(()), (m((2, 2)), m((1, 2))), {}, "three")]


def s_tensor_split(m):
    return [SampleInput(m((5,)), (2,)), SampleInput(m((2, 5)), ([1, 3], 1), {}, "indices"),
            SampleInput(m((3, 2)), (4,), {}, "more sections than size")]


def s_hsplit(m):
    return [SampleInput(m((2, 4)), (2,)), SampleInput(m((4,)), ([1, 3],), {}, "1-d indices")]


def s_vsplit(m):
    return [SampleInput(m((4, 2)), (2,)), SampleInput(m((3, 2)), ([1],), {}, "indices")]


def s_rot90(m):
    return [SampleInput(m((2, 3)), (), {}, "k=1"), SampleInput(m((2, 3)), (2,), {}, "k=2"),
            SampleInput(m((2, 3, 2)), (3, (0, 2)), {}, "k=3 dims"), SampleInput(m((2, 3)), (-1, (1, 0)), {}, "k=-1")]


def s_block_diag(m):
    return [SampleInput(m((1, 2)), (m((2, 1)),)), SampleInput(m((2,)), (m(()), m((2, 2))), {}, "1-d, 0-d, 2-d")]


def s_cdist(m):
    return [SampleInput(m((2, 3)), (m((3, 3)),)), SampleInput(m((2, 2, 2)), (m((2, 3, 2)),), {"p": 1.0}, "batched p=1"),
            SampleInput(m((2, 2)), (m((2, 2)),), {"p": 3.0}, "p=3")]


def s_atleast(m):
    return [SampleInput(m(()), (), {}, "0-d"), SampleInput(m((3,)), (), {}, "1-d"), SampleInput(m((2, 3)), (), {}, "2-d"),
            SampleInput(m((2, 1, 2)), (), {}, "3-d")]


def s_as(m):
    return [SampleInput(m((2, 3)), (m((3, 2)),)), SampleInput(m((4,)), (m((2, 2)),), {}, "1-d")]


def s_expand_as(m):
    return [SampleInput(m((1, 3)), (m((2, 3)),)), SampleInput(m(()), (m((2,)),), {}, "0-d")]


def s_type_as(m):
    return [SampleInput(m((2, 3)), (m((1,), dtype=np.complex128),), {}, "to complex"),
            SampleInput(m((2,)), (m((1,)),), {}, "same")]


def s_new(m):
    return [SampleInput(m((2,)), (3,), {}, "int"), SampleInput(m((2,)), ((2, 2),), {"dtype": np.float32}, "dtype")]


def s_new_full(m):
    return [SampleInput(m((2,)), ((2, 3), 1.5), {}, "plain")]


def s_new_tensor(m):
    return [SampleInput(m((2,)), ([1, 2],), {}, "list"), SampleInput(m((2,)), ([1.5],), {"dtype": np.float32}, "dtype")]


def _atleast_ref(n):
    return {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]


def _group1(add):
    add(OpInfo("addmm", _fn("addmm"), s_addmm, lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
               REAL_COMPLEX, composite=True))
    add(OpInfo("addmv", _fn("addmv"), s_addmv, lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
               REAL_COMPLEX, composite=True))
    add(OpInfo("addbmm", _fn("addbmm"), s_addbmm,
               lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, (a @ b).sum(0), alpha), REAL_COMPLEX, composite=True))
    add(OpInfo("baddbmm", _fn("baddbmm"), s_baddbmm, lambda s, a, b, beta=1, alpha=1: _r_axpby(s, beta, a @ b, alpha),
               REAL_COMPLEX, composite=True))
    add(OpInfo("addcmul", _fn("addcmul"), s_addc, lambda s, a, b, value=1: s + value * a * b, REAL_COMPLEX,
               composite=True))
    add(OpInfo("addcdiv", _fn("addcdiv"), s_addc, lambda s, a, b, value=1: s + value * a / b, REAL, composite=True))
    add(OpInfo("lerp", _fn("lerp"), s_lerp, lambda s, e, w: s + w * (e - s), REAL, composite=True))
    add(OpInfo("mv", _fn("mv"), s_mv, np.matmul, REAL_COMPLEX, composite=True))
    add(OpInfo("vdot", _fn("vdot"), s_vdot, np.vdot, REAL_COMPLEX, composite=True))
    add(OpInfo("repeat", _method("repeat"), s_repeat, _r_repeat, REAL_COMPLEX, composite=True))
    add(OpInfo("tile", _fn("tile"), s_tile, _r_tile, REAL, composite=True))
    add(OpInfo("repeat_interleave", _fn("repeat_interleave"), s_repeat_interleave, _r_repeat_interleave, REAL,
               composite=True))
    add(OpInfo("movedim", _fn("movedim"), s_movedim, np.moveaxis, REAL_COMPLEX, composite=True, is_view=True))
    add(OpInfo("unflatten", _fn("unflatten"), s_unflatten,
               lambda x, d, s: x.reshape(x.shape[:d % x.ndim] + tuple(s) + x.shape[d % x.ndim + 1:]), REAL,
               composite=True))
    add(OpInfo("meshgrid", lambda *a, **k: ops.meshgrid(*a, **k), s_meshgrid, _r_meshgrid, REAL, composite=True))
    add(OpInfo("broadcast_tensors", lambda *a: ops.broadcast_tensors(*a), s_broadcast_tensors,
               lambda *a: tuple(np.broadcast_arrays(*a)), REAL, composite=True))
    add(OpInfo("tensor_split", _fn("tensor_split"), s_tensor_split, _r_tensor_split, REAL, composite=True))
    add(OpInfo("hsplit", _fn("hsplit"), s_hsplit, lambda x, i: tuple(np.hsplit(x, i)), REAL, composite=True))
    add(OpInfo("vsplit", _fn("vsplit"), s_vsplit, lambda x, i: tuple(np.vsplit(x, i)), REAL, composite=True))
    add(OpInfo("rot90", _fn("rot90"), s_rot90, lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims), REAL_COMPLEX,
               composite=True))
    add(OpInfo("block_diag", lambda *a: ops.block_diag(*a), s_block_diag, _r_block_diag, REAL, composite=True))
    add(OpInfo("cdist", _fn("cdist"), s_cdist, _r_cdist, REAL, composite=True))
    for n in (1, 2, 3):
        add(OpInfo(f"atleast_{n}d", _fn(f"atleast_{n}d"), s_atleast, _atleast_ref(n), REAL, composite=True))
    add(OpInfo("view_as", _method("view_as"), s_as, lambda x, o: x.reshape(o.shape), REAL, composite=True,
               is_view=True))
    add(OpInfo("reshape_as", _method("reshape_as"), s_as, lambda x, o: x.reshape(o.shape), REAL, composite=True))
    add(OpInfo("expand_as", _method("expand_as"), s_expand_as, lambda x, o: np.broadcast_to(x, o.shape), REAL,
               composite=True, is_view=True))
    add(OpInfo("type_as", _method("type_as"), s_type_as, lambda x, o: x.astype(o.dtype), REAL, composite=True))
    add(OpInfo("new_zeros", _method("new_zeros"), s_new, lambda x, *s, dtype=None: np.zeros(
        s[0] if len(s) == 1 else s, dtype or x.dtype), REAL, composite=True, differentiable=False))
    add(OpInfo("new_ones", _method("new_ones"), s_new, lambda x, *s, dtype=None: np.ones(
        s[0] if len(s) == 1 else s, dtype or x.dtype), REAL, composite=True, differentiable=False))
    add(OpInfo("new_full", _method("new_full"), s_new_full, lambda x, s, v, dtype=None: np.full(s, v, dtype or x.dtype),
               REAL, composite=True, differentiable=False))
    add(OpInfo("new_tensor", _method("new_tensor"), s_new_tensor, lambda x, d, dtype=None: np.asarray(
        d, dtype or x.dtype), REAL, composite=True, differentiable=False))


def register(add) -> None:
    """Add the entries of issue 13 to the op database."""
    _group1(add)
