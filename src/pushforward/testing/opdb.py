"""The op database: one `OpInfo` per op of derivatives.yaml (like PyTorch's OpInfo).

Each entry knows how to call its op, makes sample inputs (several shapes, 0-d,
broadcasting pairs, empty tensors where meaningful) inside the op's domain, has a
NumPy/SciPy reference, the dtypes it supports (complex where the op supports it), its
in-place variant, whether it is a view, whether it is differentiable, and the kind of
its forward formula (read from the generated Op records).

`check_op(name)` runs the derivative checks of one op (used by `pushforward check`):

>>> from pushforward.testing.opdb import OPS, check_op
>>> r = check_op("sin")
>>> r["backward"], r["forward"], r["fwd_over_rev"], r["complex"], r["kind"]
(True, True, True, True, 'auto_element_wise')
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable

import numpy as np
import scipy.special as sp

from ..ops import generated as ops
from ..core.tensor import Tensor, wrap
from ..autograd import forward_ad as fwAD
from ..compiler import compile as compile_fn
from ..autograd.gradcheck import (
    GradcheckError,
    batched_backward_error,
    batched_forward_error,
    gradcheck,
    gradcheck_forms,
    gradgradcheck,
)
from ..engine.graph import grad
from .opdb_linalg import add_fft_ops, add_legacy_ops, add_linalg_ops, add_more_ops, add_special_ops
from .opdb_nn import register as register_nn_ops
from .opdb_scipy import register as register_scipy_ops
from .opdb_numeric import register as register_numeric_ops
from .taylor_check import check_jet
from .opinfo import (
    BOOL,
    C128,
    F32,
    F64,
    I64,
    REAL,
    REAL_COMPLEX,
    OpInfo,
    SampleInput,
    _fn,
    _leaf,
    _map,
    _method,
    _binary,
    _unary,
    make_tensor,
    op_record,
)

__all__ = [
    "SampleInput",
    "OpInfo",
    "OPS",
    "check_op",
    "check_sample",
    "forward_forms",
    "backward_forms",
    "FORWARD_FORMS",
    "make_tensor",
    "yaml_op_names",
    "op_record",
    "gradcheck_fn",
    "diff_leaves",
]


# -- pytree-ish helpers (SampleInput, OpInfo and the tensor factory are in opinfo.py) -------------------


def _is_float_tensor(v) -> bool:
    return isinstance(v, Tensor) and v._data.dtype.kind in "fc"


def diff_leaves(sample: SampleInput) -> list:
    """The floating/complex Tensors of a sample, in call order."""
    out = []
    _map(lambda t: out.append(t), (sample.input, sample.args, sample.kwargs), _is_float_tensor)
    return out


def _rebuild(sample: SampleInput, leaves) -> SampleInput:
    it = iter(leaves)
    inp, args, kwargs = _map(lambda t: next(it), (sample.input, sample.args, sample.kwargs), _is_float_tensor)
    return SampleInput(inp, args, kwargs, sample.name, sample.grad, sample.gradgrad)


def gradcheck_fn(info: OpInfo, sample: SampleInput) -> tuple[Callable, tuple]:
    """(fn, inputs) for gradcheck: fn takes the sample's differentiable tensors positionally."""
    leaves = [t.detach().requires_grad_(True) for t in diff_leaves(sample)]

    def fn(*xs):
        s = _rebuild(sample, xs)
        return info.op(s.input, *s.args, **s.kwargs)

    fn.__qualname__ = fn.__name__ = info.name
    return fn, tuple(leaves)


# -- NumPy references -----------------------------------------------------------------------------------


def _dims(dim, ndim):
    if dim is None or dim == ():
        return None
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    return tuple(d % max(ndim, 1) for d in dims) if ndim else None


def _ref_sgn(x):
    if x.dtype.kind != "c":
        return np.sign(x)
    r = np.abs(x)
    return np.where(r == 0, 0, x / np.where(r == 0, 1, r))


def _ref_div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    return np.trunc(np.true_divide(a, b))


def _ref_var(x, dim=None, correction=1, keepdim=False):
    return np.var(x, axis=_dims(dim, x.ndim), ddof=correction, keepdims=keepdim)


def _ref_norm(x, p=2, dim=None, keepdim=False):
    """Vector p-norm by np.linalg.norm over the reduced axes moved last (independent of the kernel)."""
    ax = _dims(dim, x.ndim)
    ax = tuple(range(x.ndim)) if ax is None else ((ax,) if isinstance(ax, int) else tuple(ax))
    ax = tuple(a % x.ndim for a in ax) if x.ndim else ()
    kept = [d for d in range(x.ndim) if d not in ax]
    moved = np.transpose(x, kept + list(ax)).reshape([x.shape[d] for d in kept] + [math.prod(x.shape[d] for d in ax)])
    out = np.linalg.norm(moved, ord=p, axis=-1)
    if keepdim:
        out = out.reshape([1 if d in ax else x.shape[d] for d in range(x.ndim)])
    return out


def _ref_minmax_dim(fn, argfn):
    def ref(x, dim, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        return fn(x, axis=dim, keepdims=keepdim), argfn(x, axis=dim, keepdims=keepdim)

    return ref


def _ref_minmax(which):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return np.amax(x) if which == "max" else np.amin(x)
        if isinstance(dim, np.ndarray):
            return np.maximum(x, dim) if which == "max" else np.minimum(x, dim)
        return _ref_minmax_dim(np.amax if which == "max" else np.amin, np.argmax if which == "max" else np.argmin)(
            x, dim, keepdim
        )

    return ref


def _ref_gather(x, dim, index):
    # element by element, torch's definition: the index is not broadcast, the result has its shape
    if x.ndim == 0:  # torch reads a 0-d input as one element in one dimension
        return _ref_gather(x.reshape(1), dim, index.reshape(-1)).reshape(index.shape)
    out = np.empty(index.shape, x.dtype)
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = x[tuple(src)]
    return out


def _ref_gather_backward(g, dim, index, shape):
    out = np.zeros(shape, g.dtype)
    for pos in np.ndindex(*index.shape):
        dst = list(pos)
        dst[dim] = index[pos]
        out[tuple(dst)] += g[pos]
    return out


def _ref_index_select_backward(g, dim, index, shape):
    out = np.zeros(shape, g.dtype)
    sl = [slice(None)] * len(shape)
    sl[dim] = index
    np.add.at(out, tuple(sl), g)
    return out


def _flat_positions(shape, indices):
    """Flat positions of the elements that `indices` selects (an independent route to the same set)."""
    return np.arange(int(np.prod(shape))).reshape(shape)[indices]


def _ref_index_backward(g, shape, indices):
    pos = _flat_positions(shape, indices)
    size = int(np.prod(shape))
    g = np.broadcast_to(g, pos.shape)
    if g.dtype.kind == "c":
        out = np.bincount(pos.ravel(), g.real.ravel(), size) + 1j * np.bincount(pos.ravel(), g.imag.ravel(), size)
    else:
        out = np.bincount(pos.ravel(), g.ravel(), size)
    return out.astype(g.dtype).reshape(shape)


def _ref_index_put(x, indices, values, accumulate=False):
    if accumulate:
        return x + _ref_index_backward(np.asarray(values, dtype=x.dtype), x.shape, indices)
    pos = _flat_positions(x.shape, indices)
    out = x.copy().reshape(-1)
    out[pos.ravel()] = np.broadcast_to(np.asarray(values, dtype=x.dtype), pos.shape).ravel()
    return out.reshape(x.shape)


def _ref_expand(x, *sizes):
    lead = len(sizes) - x.ndim
    shape = tuple(x.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes))
    return np.broadcast_to(x, shape)


def _ref_flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (math.prod(x.shape[s : e + 1]),) + x.shape[e + 1 :])


def _ref_narrow(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(start, start + length)
    return x[tuple(sl)]


def _ref_select(x, dim, index):
    sl = [slice(None)] * x.ndim
    sl[dim] = index
    return x[tuple(sl)]


def _ref_squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    ax = tuple(d % x.ndim for d in dims if x.shape[d] == 1)
    return np.squeeze(x, axis=ax) if ax else x


def _ref_split(x, split_size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        cuts = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        cuts = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(x, cuts, axis=dim))


def _ref_chunk(x, chunks, dim=0):
    n = x.shape[dim]
    step = -(-n // chunks)
    return _ref_split(x, step, dim)


def _ref_roll(x, shifts, dims=None):
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, axis=dims)


def _ref_view_scatter(x, src, steps):
    return _ref_write_view(x.copy(), src, steps)


def _ref_view_embed(src, shape, steps):
    return _ref_write_view(np.zeros(shape, src.dtype), src, steps)


def _ref_write_view(out, src, steps):
    v = out
    for fn, args in steps:
        v = _VIEW_REFS[fn.__name__](v, *args)
        v.flags.writeable = True  # np.diagonal's view is read-only
    v[...] = src
    return out


def _ref_copy_from(x, src):
    return np.broadcast_to(src, x.shape).astype(x.dtype)


def _ref_masked_fill(x, mask, value):
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def _ref_to(x, dtype=None, copy=False):
    return x.copy() if dtype is None else x.astype(dtype)


def _ref_polygamma(n, x):
    if np.iscomplexobj(x):  # SciPy is real only: mpmath (a torch dependency) for complex references
        import mpmath

        return np.vectorize(lambda z: complex(mpmath.polygamma(n, complex(z))), otypes=[x.dtype])(x)
    return np.asarray(sp.polygamma(n, x)).astype(x.dtype)  # (torch's polygamma keeps float32)


def _ref_clamp(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _ref_logit(x, eps=None):
    return sp.logit(x if eps is None else np.clip(x, eps, 1 - eps))


_VIEW_REFS = {
    "narrow": _ref_narrow,
    "select": _ref_select,
    "diagonal": lambda x, o=0, a=0, b=1: np.diagonal(x, o, a, b),
    "transpose": lambda x, a, b: np.swapaxes(x, a, b),
    "getitem": lambda x, i: _ref_getitem_view(x, i),
}


def _ref_getitem_view(x, i):
    r = x[i]
    if not isinstance(r, np.ndarray):  # an integer index to 0-d: NumPy gives a scalar, we need a view
        r = x[(i if isinstance(i, tuple) else (i,)) + (Ellipsis,)]
    return r


# -- sample generators ---------------------------------------------------------------------------------


def _reduce_samples(m, dims=True, empty=True, zero_d=True):
    x = m((2, 3))
    out = [
        SampleInput(m((2, 3)), (), {}, "all"),
        SampleInput(m((2, 3, 2)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3)), (-1,), {"keepdim": True}, "dim=-1 keepdim"),
    ]
    if dims:
        out.append(SampleInput(m((2, 3, 2)), ((0, 2),), {}, "dims=(0, 2)"))
    if zero_d:
        out.append(SampleInput(m(()), (), {}, "0-d"))
    if empty:
        out.append(SampleInput(m((0, 3)), (1,), {}, "empty"))
    del x
    return out


def s_where(m):
    return [
        SampleInput(m.mask((2, 3)), (m((2, 3)), m((2, 3))), {}, "same"),
        SampleInput(m.mask((2, 1)), (m((3,)), m((2, 3))), {}, "broadcast"),
        SampleInput(m.mask(()), (m(()), m(())), {}, "0-d"),
        SampleInput(m.mask((3,)), (m((3,)), 0.5), {}, "scalar other"),
        SampleInput(m.mask((2, 3)), (-1.5, m((3,))), {}, "scalar self"),
        SampleInput(m.mask((0, 3)), (m((0, 3)), m((3,))), {}, "empty"),
    ]


def s_pow(m):
    out = _binary(m, rhs={"low": -2.0, "high": 2.0}, scalars=(2.0, 3, 0.5, -1.5), lhs_scalars=(1.7,))
    if m.dtype.kind == "f":
        # integer exponent on negative bases, and zero bases with positive exponents
        out.append(SampleInput(m((4,), low=-2.0, high=2.0), (3,), {}, "negative base, int exponent"))
        out.append(
            SampleInput(m.tensor([0.0, 1.5, 0.0]), (m.tensor([2.0, 1.5, 3.0]),), {}, "zero base", gradgrad=False)
        )
    # a real 0-d exponent tensor takes the constant-exponent forms; between 0 and 1 the singular
    # one (its second order runs x ** (e - 1), there for e = 1.4); with a complex base each must
    # conjugate x ** (e - 1)
    out += [
        SampleInput(m((2, 3), low=0.5, high=2.0), (m.tensor(e, np.float64),), {}, f"0-d real exponent {e}")
        for e in (0.7, 1.4)
    ]
    return out


def s_clamp(m):
    return [
        SampleInput(m((2, 3)), (-0.5, 0.5), {}, "numbers"),
        SampleInput(m((2, 3)), (), {"min": m((3,), low=-1.0, high=0.0)}, "min tensor"),
        SampleInput(m((2, 3)), (), {"max": m((2, 1), low=0.0, high=1.0)}, "max tensor"),
        SampleInput(m((2, 3)), (m((2, 3), low=-3.0, high=0.0), m((3,), low=0.0, high=3.0)), {}, "both tensors"),
        SampleInput(m(()), (-1.0,), {}, "0-d min"),
        SampleInput(m((0, 3)), (None, 1.0), {}, "empty"),
    ]


def s_div(m):
    out = _binary(m, rhs={"low": 0.5, "high": 2.0} if m.dtype.kind == "f" else None, lhs_scalars=(1.5,))
    if m.dtype.kind == "f":
        out += [
            SampleInput(m((2, 3)), (m((3,), low=0.5, high=2.0),), {"rounding_mode": mode}, mode)
            for mode in ("floor", "trunc")
        ]
    return out


def s_copysign(m):
    return _binary(m, scalars=(-1.0, 2.0))


def s_logit(m):
    return _unary(m) + [SampleInput(m.tensor([0.1, 0.3, 0.6, 0.9]), (), {"eps": 0.2}, "eps")]


def s_round(m):
    return _unary(m) + [SampleInput(m((3,)), (), {"decimals": 1}, "decimals=1")]


def s_polygamma(m):
    return [SampleInput(n, (m(s),), {}, f"n={n} shape{s}") for n in (0, 1, 2) for s in ((), (4,), (2, 3))] + [
        SampleInput(1, (m((0, 2)),), {}, "empty")
    ]


def s_sum(m):
    out = _reduce_samples(m) + [SampleInput(m((0, 3)), (0,), {}, "empty reduced dim")]
    if m.dtype == F32:
        out.append(SampleInput(m((2, 3)), (1,), {"dtype": np.float64}, "dtype=float64"))
    return out


def s_mean(m):
    return _reduce_samples(m, empty=False) + [SampleInput(m((0, 3)), (1,), {}, "empty other dim")]


def s_prod(m):
    out = [
        SampleInput(m((2, 3)), (), {}, "all"),
        SampleInput(m((2, 3, 2)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3)), (-1,), {"keepdim": True}, "keepdim"),
        SampleInput(m(()), (), {}, "0-d"),
        SampleInput(m(()), (0,), {}, "0-d dim=0"),
        SampleInput(m((0, 3)), (1,), {}, "empty"),
    ]
    if m.dtype.kind in "fc":
        out += [
            SampleInput(m.tensor([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0]]), (1,), {}, "zeros dim"),
            SampleInput(m.tensor([1.5, 0.0, 2.0]), (), {}, "one zero"),
            SampleInput(m.tensor([1.5, 0.0, 0.0]), (), {}, "two zeros"),
        ]
    return out


def s_amax(m):
    out = [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3, 2)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3, 2)), ((0, 2),), {"keepdim": True}, "dims keepdim"),
        SampleInput(m(()), (), {}, "0-d"),
    ]
    if m.dtype.kind == "f":
        out.append(SampleInput(m.tensor([[1.0, 1.0, -1.0], [0.5, 0.2, 0.5]]), (1,), {}, "ties", gradgrad=False))
    return out


def s_max_dim(m):
    out = [
        SampleInput(m((2, 3)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3, 2)), (0,), {"keepdim": True}, "keepdim"),
        SampleInput(m((4,)), (-1,), {}, "1-d"),
        SampleInput(m(()), (0,), {}, "0-d"),
    ]
    return out


def s_minmax(m):
    out = [
        SampleInput(m((2, 3)), (), {}, "full"),
        SampleInput(m((2, 3)), (1,), {}, "dim"),
        SampleInput(m((2, 3)), (0,), {"keepdim": True}, "dim keepdim"),
        SampleInput(m((2, 3)), (m((3,)),), {}, "element-wise"),
    ]
    return out


def s_var(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3, 2)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3)), ((0, 1),), {"correction": 0}, "correction=0"),
        SampleInput(m((2, 3)), (-1,), {"keepdim": True}, "keepdim"),
        SampleInput(m((4,)), (), {"correction": 2}, "correction=2"),
    ]


def s_std(m):
    return s_var(m) + [SampleInput(m.tensor([[1.0, 1.0], [0.5, 2.0]]), (1,), {}, "zero std", grad=False)]


def s_norm(m):
    out = [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), (1,), {}, "p=1"),
        SampleInput(m((2, 3)), (3,), {}, "p=3"),
        SampleInput(m((2, 3)), (float("inf"),), {}, "p=inf"),
        SampleInput(m((2, 3)), (2, 1), {}, "dim=1"),
        SampleInput(m((2, 3)), (2, (0, 1), True), {}, "keepdim"),
        SampleInput(m(()), (), {}, "0-d"),
        SampleInput(m((2, 3)), (1.5, 0), {}, "p=1.5 dim=0"),
    ]
    if m.dtype.kind == "f":
        out.append(SampleInput(m.tensor([[0.0, 0.0], [1.0, 2.0]]), (2, 1), {}, "zero row", grad=False))
    return out


def s_logsumexp(m):
    return [
        SampleInput(m((2, 3)), (1,), {}, "dim=1"),
        SampleInput(m((2, 3)), ((0, 1),), {}, "all dims"),
        SampleInput(m((2, 3, 2)), (0,), {"keepdim": True}, "keepdim"),
        SampleInput(m(()), (0,), {}, "0-d"),
    ]


def s_softmax(m):
    return [
        SampleInput(m((2, 3)), (1,)),
        SampleInput(m((2, 3)), (0,)),
        SampleInput(m((2, 3, 2)), (-1,)),
        SampleInput(m(()), (0,), {}, "0-d"),
        SampleInput(m((0, 3)), (1,), {}, "empty"),
    ]


def s_cumsum(m):
    return [
        SampleInput(m((4,)), (0,)),
        SampleInput(m((2, 3)), (1,)),
        SampleInput(m((2, 3)), (-2,)),
        SampleInput(m(()), (0,), {}, "0-d"),
        SampleInput(m((0, 3)), (1,), {}, "empty"),
    ]


def s_cumprod(m):
    out = s_cumsum(m)
    if m.dtype.kind in "fc":
        out += [
            SampleInput(m.tensor([1.5, 0.0, 2.0, -1.0]), (0,), {}, "one zero"),
            SampleInput(m.tensor([[1.5, 0.0, 0.0], [2.0, 0.5, 0.0]]), (1,), {}, "zeros"),
        ]
    return out


def s_matmul(m):
    pairs = [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3, 4)),
        ((2, 2, 3), (3, 4)),
        ((3,), (2, 3, 2)),
        ((2, 1, 2, 3), (3, 3, 2)),
        ((1, 2, 3), (2, 3, 2)),
        ((2, 3), (2, 3, 1)),
        ((0, 3), (3, 2)),
    ]
    return [SampleInput(m(a), (m(b),), {}, f"{a}@{b}") for a, b in pairs]


def s_mm(m):
    return [
        SampleInput(m((2, 3)), (m((3, 4)),)),
        SampleInput(m((1, 1)), (m((1, 3)),)),
        SampleInput(m((0, 3)), (m((3, 2)),), {}, "empty"),
    ]


def s_bmm(m):
    return [SampleInput(m((2, 2, 3)), (m((2, 3, 4)),)), SampleInput(m((1, 3, 1)), (m((1, 1, 2)),))]


def s_dot(m):
    return [
        SampleInput(m((3,)), (m((3,)),)),
        SampleInput(m((1,)), (m((1,)),)),
        SampleInput(m((0,)), (m((0,)),), {}, "empty"),
    ]


def s_outer(m):
    return [
        SampleInput(m((2,)), (m((3,)),)),
        SampleInput(m((1,)), (m((4,)),)),
        SampleInput(m((0,)), (m((3,)),), {}, "empty"),
    ]


def s_einsum(m):
    return [
        SampleInput("ij,jk->ik", (m((2, 3)), m((3, 4)))),
        SampleInput("i,i->", (m((3,)), m((3,)))),
        SampleInput("ij->j", (m((2, 3)),)),
        SampleInput("bij,bjk->bik", (m((2, 2, 3)), m((2, 3, 2)))),
        SampleInput("ij,jk,k->i", (m((2, 3)), m((3, 2)), m((2,)))),
        SampleInput("ij", (m((2, 3)),), {}, "implicit"),
        SampleInput("ij,k->ijk", (m((2, 2)), m((3,))), {}, "outer"),
        SampleInput("ij->", (m((2, 3)),), {}, "total"),
        SampleInput("...j,j->...", (m((2, 3)), m((3,))), {}, "ellipsis"),
        SampleInput("ii->i", (m((3, 3)),), {}, "repeated index"),
        # traces, repeated indices with other letters, size-1 broadcasting, ellipsis forms
        SampleInput("ii", (m((3, 3)),), {}, "trace"),
        SampleInput("iij->j", (m((2, 2, 3)),), {}, "repeated, summed"),
        SampleInput("ii,ij->j", (m((2, 2)), m((2, 3))), {}, "repeated with another operand"),
        SampleInput("ij,jk->ik", (m((3, 2)), m((1, 4))), {}, "size-1 broadcast"),
        SampleInput("...ij,...jk", (m((2, 1, 2, 3)), m((3, 3, 2))), {}, "ellipsis broadcast"),
        SampleInput("i...->...", (m((2, 3)),), {}, "ellipsis sum"),
    ]


def s_cat(m):
    return [
        SampleInput([m((2, 3)), m((1, 3))], (0,)),
        SampleInput([m((2, 1)), m((2, 2)), m((2, 3))], (1,)),
        SampleInput([m((2, 3)), m((0, 3))], (0,), {}, "empty piece"),
        SampleInput([m((3,))], (0,), {}, "single"),
        SampleInput([m((2, 3)), m((2, 3))], (-1,), {}, "dim=-1"),
    ]


def s_stack(m):
    return [
        SampleInput([m((2, 3)), m((2, 3))], (0,)),
        SampleInput([m((3,)), m((3,)), m((3,))], (1,)),
        SampleInput([m(()), m(())], (0,), {}, "0-d"),
        SampleInput([m((2, 3)), m((2, 3))], (-1,), {}, "dim=-1"),
    ]


def s_flip(m):
    return [
        SampleInput(m((4,)), ([0],)),
        SampleInput(m((2, 3)), ([0, 1],)),
        SampleInput(m((2, 3)), ([-1],)),
        SampleInput(m(()), ([],), {}, "0-d"),
    ]


def s_roll(m):
    return [
        SampleInput(m((4,)), (1,)),
        SampleInput(m((2, 3)), (2,), {}, "flattened"),
        SampleInput(m((2, 3)), ((1, -1), (0, 1)), {}, "two dims"),
        SampleInput(m((2, 3)), (-1, 1), {}, "dim=1"),
    ]


def s_tril(m):
    return [
        SampleInput(m((3, 3))),
        SampleInput(m((3, 4)), (1,)),
        SampleInput(m((2, 3, 3)), (-1,)),
        SampleInput(m((0, 3)), (), {}, "empty"),
    ]


def s_gather(m):
    return [
        SampleInput(m((3, 4)), (1, m.index(4, (3, 2)))),
        SampleInput(m((3, 4)), (0, m.index(3, (2, 4)))),
        SampleInput(m((3, 4)), (1, _leaf(np.array([[0, 0], [1, 1], [3, 3]]))), {}, "repeated"),
        SampleInput(m((4,)), (0, m.index(4, (6,))), {}, "1-d"),
        # an index smaller than the input in the other dimensions is not broadcast
        SampleInput(m((2, 3)), (0, _leaf(np.array([[1]]))), {}, "small index"),
        SampleInput(m((3, 4)), (1, _leaf(np.array([[3, 0, 0, 2, 1], [1, 1, 0, 0, 0]]))), {}, "small rows"),
        SampleInput(m((3, 4)), (0, m.index(3, (0, 2))), {}, "empty index"),
    ]


def s_gather_backward(m):
    return [
        SampleInput(m((1, 1)), (0, _leaf(np.array([[1]])), (2, 3)), {}, "small index"),
        SampleInput(m((3, 2)), (1, m.index(4, (3, 2)), (3, 4))),
        SampleInput(m((2, 4)), (0, m.index(3, (2, 4)), (3, 4))),
        SampleInput(m((6,)), (0, m.index(4, (6,)), (4,)), {}, "1-d"),
    ]


def s_index_select(m):
    return [
        SampleInput(m((3, 4)), (0, _leaf(np.array([2, 0, 2])))),
        SampleInput(m((3, 4)), (1, m.index(4, (5,)))),
        SampleInput(m((4,)), (0, _leaf(np.array([3]))), {}, "1-d"),
        SampleInput(m((3, 4)), (1, _leaf(np.zeros(0, np.int64))), {}, "empty index"),
    ]


def s_index_select_backward(m):
    return [
        SampleInput(m((3, 4)), (0, _leaf(np.array([2, 0, 2])), (3, 4))),
        SampleInput(m((3, 5)), (1, m.index(4, (5,)), (3, 4))),
        SampleInput(m((1,)), (0, _leaf(np.array([3])), (4,)), {}, "1-d"),
    ]


def s_masked_fill(m):
    return [
        SampleInput(m((2, 3)), (m.mask((2, 3)), m(())), {}, "tensor value"),
        SampleInput(m((2, 3)), (m.mask((3,)), 0.5), {}, "number, broadcast mask"),
        SampleInput(m(()), (m.mask(()), m(())), {}, "0-d"),
        SampleInput(m((0, 3)), (m.mask((0, 3)), 1.0), {}, "empty"),
    ]


def _int_index():
    return np.array([2, 0, 2])


def s_index(m):
    return [
        SampleInput(m((3, 4)), (_int_index(),), {}, "int array"),
        SampleInput(m((3, 4)), ((np.array([0, 2]), np.array([1, 3])),), {}, "two arrays"),
        SampleInput(m((3, 4)), (np.array([True, False, True]),), {}, "bool mask"),
        SampleInput(m((3, 4)), ((slice(None), np.array([3, 3, 0])),), {}, "slice + array"),
        SampleInput(m((3, 4)), (np.array([[0, 1], [2, 2]]),), {}, "2-d index"),
    ]


def s_index_backward(m):
    return [
        SampleInput(m((3, 4)), ((3, 4), _int_index()), {}, "int array"),
        SampleInput(m((2,)), ((3, 4), (np.array([0, 2]), np.array([1, 3]))), {}, "two arrays"),
        SampleInput(m((2, 4)), ((3, 4), np.array([True, False, True])), {}, "bool mask"),
    ]


def s_index_put(m):
    return [
        SampleInput(m((3, 4)), (np.array([0, 2]), m((2, 4))), {}, "rows"),
        SampleInput(m((3, 4)), ((np.array([0, 2]), np.array([1, 3])), m((2,))), {}, "points"),
        SampleInput(m((3, 4)), ((np.array([0, 2, 0]), np.array([1, 3, 1])), m((3,)), True), {}, "accumulate"),
        SampleInput(m((3, 4)), (np.array([True, False, True]), m((4,))), {}, "bool mask, broadcast values"),
    ]


def s_view_scatter(m):
    return [
        SampleInput(m((3, 4)), (m((2, 4)), ((ops.narrow, (0, 1, 2)),)), {}, "narrow"),
        SampleInput(m((3, 4)), (m((3,)), ((ops.select, (1, 2)),)), {}, "select"),
        SampleInput(m((3, 3)), (m((2,)), ((ops.diagonal, (1, 0, 1)),)), {}, "diagonal"),
        SampleInput(m((2, 3, 4)), (m((3,)), ((ops.select, (0, 1)), (ops.select, (1, 2)))), {}, "chain"),
    ]


def s_view_embed(m):
    return [
        SampleInput(m((2, 4)), ((3, 4), ((ops.narrow, (0, 1, 2)),)), {}, "narrow"),
        SampleInput(m((3,)), ((3, 4), ((ops.select, (1, 2)),)), {}, "select"),
        SampleInput(m((2,)), ((3, 3), ((ops.diagonal, (1, 0, 1)),)), {}, "diagonal"),
        SampleInput(m(()), ((4,), ((ops.getitem, (1,)),)), {}, "0-d"),
        SampleInput(m((3,)), ((2, 3, 4), ((ops.select, (0, 1)), (ops.select, (1, 2)))), {}, "chain"),
    ]


def s_view(m):
    return [
        SampleInput(m((2, 3)), (3, 2)),
        SampleInput(m((2, 3)), (-1,)),
        SampleInput(m((2, 3)), ((6, 1),), {}, "tuple"),
        SampleInput(m(()), (1,), {}, "0-d"),
        SampleInput(m((0, 3)), (3, 0), {}, "empty"),
    ]


def s_reshape(m):
    return s_view(m) + [SampleInput(m((2, 3), contiguous=False), (6,), {}, "non-contiguous (copy)")]


def s_transpose(m):
    return [SampleInput(m((2, 3)), (0, 1)), SampleInput(m((2, 3, 4)), (0, -1)), SampleInput(m(()), (0, 0), {}, "0-d")]


def s_permute(m):
    return [
        SampleInput(m((2, 3, 4)), (2, 0, 1)),
        SampleInput(m((2, 3)), ((1, 0),), {}, "tuple"),
        SampleInput(m(()), ((),), {}, "0-d"),
    ]


def s_t(m):
    return [SampleInput(m((2, 3))), SampleInput(m((3,)), (), {}, "1-d"), SampleInput(m(()), (), {}, "0-d")]


def s_mT(m):
    return [SampleInput(m((2, 3))), SampleInput(m((2, 3, 4)), (), {}, "batched")]


def s_squeeze(m):
    return [
        SampleInput(m((1, 3, 1))),
        SampleInput(m((1, 3, 1)), (0,)),
        SampleInput(m((1, 3, 1)), ((0, 2),), {}, "dims"),
        SampleInput(m((2, 3)), (0,), {}, "not size 1"),
        SampleInput(m(()), (), {}, "0-d"),
    ]


def s_unsqueeze(m):
    return [SampleInput(m((2, 3)), (0,)), SampleInput(m((2, 3)), (-1,)), SampleInput(m(()), (0,), {}, "0-d")]


def s_expand(m):
    return [
        SampleInput(m((1, 3)), (2, 3)),
        SampleInput(m((3,)), (2, 3), {}, "new dim"),
        SampleInput(m((2, 1)), (-1, 4), {}, "-1"),
        SampleInput(m(()), (3,), {}, "0-d"),
    ]


def s_flatten(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3, 2)), (1,)),
        SampleInput(m((2, 3, 2)), (0, 1)),
        SampleInput(m(()), (), {}, "0-d"),
        SampleInput(m((2, 3, 2), contiguous=False), (), {}, "non-contiguous"),
    ]


def s_diagonal(m):
    return [
        SampleInput(m((3, 3))),
        SampleInput(m((3, 4)), (1,)),
        SampleInput(m((2, 3, 3)), (-1, 1, 2)),
        SampleInput(m((2, 3)), (5,), {}, "empty"),
    ]


def s_narrow(m):
    return [
        SampleInput(m((4,)), (0, 1, 2)),
        SampleInput(m((2, 5)), (1, 0, 3)),
        SampleInput(m((2, 5)), (-1, -2, 2)),
        SampleInput(m((3,)), (0, 1, 0), {}, "empty"),
    ]


def s_select(m):
    return [SampleInput(m((4,)), (0, 1)), SampleInput(m((2, 5)), (1, -1)), SampleInput(m((2, 3, 2)), (0, 1))]


def s_getitem(m):
    return [
        SampleInput(m((3, 4)), ((slice(0, 2), 1),)),
        SampleInput(m((3, 4)), ((None, Ellipsis),)),
        SampleInput(m((3, 4)), (-1,)),
        SampleInput(m((5,)), (slice(None, None, 2),)),
        SampleInput(m((2, 3, 4)), ((Ellipsis, 0),)),
        SampleInput(m((3,)), (slice(2, 2),), {}, "empty"),
    ]


def s_split(m):
    return [
        SampleInput(m((5,)), (2,)),
        SampleInput(m((2, 5)), ([1, 4], 1)),
        SampleInput(m((4, 2)), (4,)),
        SampleInput(m((3, 2)), (1,), {"dim": 0}, "dim kw"),
    ]


def s_chunk(m):
    return [SampleInput(m((5,)), (2,)), SampleInput(m((2, 6)), (3, 1)), SampleInput(m((3, 2)), (4,), {}, "more chunks")]


def s_unbind(m):
    return [SampleInput(m((3,))), SampleInput(m((2, 3)), (1,)), SampleInput(m((2, 3, 2)), (-1,))]


def s_to(m):
    out = [SampleInput(m((2, 3)), (None, True), {}, "copy"), SampleInput(m(()), (), {}, "no-op")]
    if m.dtype.kind == "f":
        out.append(SampleInput(m((2, 3)), (np.complex128,), {}, "to complex"))
    else:
        out.append(SampleInput(m((2, 3)), (np.complex128,), {}, "same dtype"))
    return out


def s_copy_from(m):
    return [
        SampleInput(m((2, 3)), (m((2, 3)),), {}, "same"),
        SampleInput(m((2, 3)), (m((3,)),), {}, "broadcast"),
        SampleInput(m((2, 3)), (m(()),), {}, "0-d src"),
        SampleInput(m(()), (m(()),), {}, "0-d"),
    ]


def s_fill(m):
    return [SampleInput(m((2, 3)), (m(()),), {}, "tensor value"), SampleInput(m((3,)), (1.5,), {}, "number")]


def s_comparison(m):
    out = _binary(m)
    if m.dtype.kind == "f":
        x = m((4,))
        out.append(SampleInput(x, (m.tensor(np.array(x._data)),), {}, "equal"))
    return out


def s_bitwise(m):
    return [SampleInput(m((2, 3)), (m((2, 3)),)), SampleInput(m((2, 3)), (m((3,)),)), SampleInput(m(()), (m(()),))]


def s_isnan(m):
    out = _unary(m)
    if m.dtype.kind in "fc":
        out.append(SampleInput(m.tensor([np.nan, 1.0, np.inf, -np.inf]), (), {}, "special"))
    return out


def s_argmax(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), (1,)),
        SampleInput(m((2, 3)), (0, True)),
        SampleInput(m(()), (), {}, "0-d"),
    ]


# -- the table -----------------------------------------------------------------------------------------


_UNARY = {
    # name: (reference, domain, complex?, inplace?)
    "neg": (np.negative, None, True, True),
    "abs": (np.abs, None, True, True),
    "sgn": (_ref_sgn, None, True, False),
    "sign": (np.sign, None, True, False),
    "exp": (np.exp, None, True, True),
    "exp2": (np.exp2, None, True, False),
    "expm1": (np.expm1, None, True, False),
    "log": (np.log, (0.1, 3.0), True, True),
    "log2": (np.log2, (0.1, 3.0), True, False),
    "log10": (np.log10, (0.1, 3.0), True, False),
    "log1p": (np.log1p, (-0.9, 2.0), True, False),
    "sqrt": (np.sqrt, (0.1, 3.0), True, True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 3.0), True, False),
    "square": (np.square, None, True, False),
    "reciprocal": (np.reciprocal, None, True, False),
    "sin": (np.sin, None, True, True),
    "cos": (np.cos, None, True, True),
    "tan": (np.tan, (-1.2, 1.2), True, False),
    "asin": (np.arcsin, (-0.9, 0.9), True, False),
    "acos": (np.arccos, (-0.9, 0.9), True, False),
    "atan": (np.arctan, None, True, False),
    "sinh": (np.sinh, None, True, False),
    "cosh": (np.cosh, None, True, False),
    "tanh": (np.tanh, None, True, True),
    "asinh": (np.arcsinh, None, True, False),
    "acosh": (np.arccosh, (1.1, 3.0), True, False),
    "atanh": (np.arctanh, (-0.9, 0.9), True, False),
    "sigmoid": (lambda x: sp.expit(x) if x.dtype.kind != "c" else 1 / (1 + np.exp(-x)), None, True, True),
    "relu": (lambda x: np.maximum(x, 0), None, False, True),
    "erf": (sp.erf, None, True, False),
    "erfc": (sp.erfc, None, True, False),
    "erfinv": (sp.erfinv, (-0.9, 0.9), False, False),
    "lgamma": (sp.gammaln, (0.1, 3.0), False, False),
    "digamma": (sp.psi, (0.1, 3.0), True, False),
    "floor": (np.floor, None, False, False),
    "ceil": (np.ceil, None, False, False),
    "trunc": (np.trunc, None, False, False),
    "real": (np.real, None, True, False),
    "imag": (np.imag, None, True, False),
    "conj": (np.conj, None, True, False),
    "angle": (np.angle, None, True, False),
}

_BINARY = {
    # name: (reference, complex?, inplace?, rhs domain, lhs scalars)
    "add": (lambda a, b, alpha=1: a + (b if alpha == 1 else alpha * b), True, True),
    "sub": (lambda a, b, alpha=1: a - (b if alpha == 1 else alpha * b), True, True),
    "mul": (np.multiply, True, True),
    "mul0": (lambda a, b: np.where(a == 0, 0, a * b), True, False),
    "atan2": (np.arctan2, False, False),
    "hypot": (np.hypot, False, False),
    "maximum": (np.maximum, False, False),
    "minimum": (np.minimum, False, False),
    "fmod": (np.fmod, False, False),
    "remainder": (np.remainder, False, False),
    "logaddexp": (np.logaddexp, False, False),
}

_COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
}
_BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}

VIEW_DTYPES = (F64, F32, C128)


def _add_elementwise(add: Callable, db: dict) -> None:
    """Unary and binary element-wise ops (with their alpha, tie and scalar samples)."""
    for name, (ref, domain, cplx, inpl) in _UNARY.items():
        dtypes = REAL_COMPLEX if cplx else REAL
        if name == "imag":
            dtypes = (C128,)
        add(
            OpInfo(
                name,
                _fn(name),
                _unary,
                ref,
                dtypes,
                domain,
                inplace=f"{name}_" if inpl else None,
                is_view={"real": "maybe", "imag": True, "conj": "maybe"}.get(name, False),
            )
        )
    add(OpInfo("logit", _fn("logit"), s_logit, _ref_logit, REAL, (0.05, 0.95)))
    add(OpInfo("polygamma", _fn("polygamma"), s_polygamma, _ref_polygamma, REAL_COMPLEX, (0.5, 3.0)))
    add(OpInfo("round", _fn("round"), s_round, lambda x, decimals=0: np.round(x, decimals), REAL))
    add(OpInfo("clamp", _fn("clamp"), s_clamp, _ref_clamp, REAL, inplace="clamp_"))

    for name, (ref, cplx, inpl) in _BINARY.items():
        scal = (1.5,) if name in ("add", "sub", "mul") else ()
        kw = {}
        add(
            OpInfo(
                name,
                _fn(name),
                (lambda m, scal=scal, kw=kw: _binary(m, lhs_scalars=scal, kwargs=kw)),
                ref,
                REAL_COMPLEX if cplx else REAL,
                inplace=f"{name}_" if inpl else None,
            )
        )
    # alpha variants
    db["add"].sample_fn = lambda m: (
        _binary(m, lhs_scalars=(1.5,))
        + [
            SampleInput(m((2, 3)), (m((3,)),), {"alpha": 2.5}, "alpha"),
            SampleInput(m((2, 3)), (1.5,), {"alpha": 2}, "scalar other, alpha"),
        ]
    )
    db["sub"].sample_fn = lambda m: (
        _binary(m, lhs_scalars=(1.5,)) + [SampleInput(m((2, 3)), (m((3,)),), {"alpha": -0.5}, "alpha")]
    )
    db["maximum"].sample_fn = lambda m: (
        _binary(m)
        + (
            [SampleInput(m.tensor([1.0, 0.5]), (m.tensor([1.0, -0.5]),), {}, "tie", gradgrad=False)]
            if m.dtype.kind == "f"
            else []
        )
    )
    db["minimum"].sample_fn = db["maximum"].sample_fn
    add(OpInfo("div", _fn("div"), s_div, _ref_div, REAL_COMPLEX, inplace="div_"))
    add(OpInfo("pow", _fn("pow"), s_pow, np.power, REAL_COMPLEX, (0.5, 2.0), inplace="pow_"))
    add(OpInfo("copysign", _fn("copysign"), s_copysign, np.copysign, REAL))
    add(
        OpInfo(
            "xlogy",
            _fn("xlogy"),
            lambda m: (
                _binary(m, rhs={"low": 0.1, "high": 3.0})
                + (
                    [SampleInput(m.tensor([0.0, 1.0]), (m.tensor([0.5, 2.0]),), {}, "zero self")]
                    if m.dtype.kind == "f"
                    else []
                )
            ),
            sp.xlogy,
            REAL_COMPLEX,
        )
    )
    add(OpInfo("where", _fn("where"), s_where, np.where, REAL_COMPLEX))


def _add_non_differentiable(add: Callable) -> None:
    """Comparisons, logical and bitwise ops, isnan/isfinite, argmax/argmin."""
    for name, ref in _COMPARE.items():
        dts = (F64, F32, BOOL) if name.startswith("logical") else (F64, F32, I64)
        if name in ("eq", "ne"):
            dts = dts + (C128,)
        add(OpInfo(name, _fn(name), s_comparison, ref, dts, differentiable=False))
    add(OpInfo("logical_not", _fn("logical_not"), _unary, np.logical_not, (F64, BOOL), differentiable=False))
    for name, ref in _BITWISE.items():
        add(OpInfo(name, _fn(name), s_bitwise, ref, (BOOL, I64), differentiable=False))
    add(OpInfo("bitwise_not", _fn("bitwise_not"), _unary, np.invert, (BOOL, I64), differentiable=False))
    add(OpInfo("isnan", _fn("isnan"), s_isnan, np.isnan, (F64, F32, C128), differentiable=False))
    add(OpInfo("isfinite", _fn("isfinite"), s_isnan, np.isfinite, (F64, F32, C128), differentiable=False))
    add(
        OpInfo(
            "argmax",
            _fn("argmax"),
            s_argmax,
            lambda x, dim=None, keepdim=False: np.argmax(x, axis=dim, keepdims=keepdim if dim is not None else False),
            (F64, F32, I64),
            differentiable=False,
        )
    )
    add(
        OpInfo(
            "argmin",
            _fn("argmin"),
            s_argmax,
            lambda x, dim=None, keepdim=False: np.argmin(x, axis=dim, keepdims=keepdim if dim is not None else False),
            (F64, F32, I64),
            differentiable=False,
        )
    )


def _add_casts_and_reductions(add: Callable) -> None:
    """Casts and copies, reductions, scans, softmax."""
    # casts and copies
    add(OpInfo("to", _method("to"), s_to, _ref_to, REAL_COMPLEX, is_view="maybe"))
    add(OpInfo("clone", _fn("clone"), _unary, np.copy, REAL_COMPLEX))
    add(OpInfo("alias", _fn("alias"), _unary, lambda x: x, REAL_COMPLEX, is_view=True))
    add(OpInfo("_copy_from", _fn("_copy_from"), s_copy_from, _ref_copy_from, REAL_COMPLEX, inplace="copy_"))
    add(OpInfo("fill", _fn("fill"), s_fill, _ref_copy_from, REAL_COMPLEX, inplace="fill_", composite=True))

    # reductions
    add(
        OpInfo(
            "sum",
            _fn("sum"),
            s_sum,
            lambda x, dim=None, keepdim=False, dtype=None: np.sum(
                x, axis=_dims(dim, x.ndim), keepdims=keepdim, dtype=dtype
            ),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "mean",
            _fn("mean"),
            s_mean,
            lambda x, dim=None, keepdim=False: np.mean(x, axis=_dims(dim, x.ndim), keepdims=keepdim),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "prod",
            _fn("prod"),
            s_prod,
            lambda x, dim=None, keepdim=False: np.prod(x, axis=_dims(dim, x.ndim), keepdims=keepdim),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "amax",
            _fn("amax"),
            s_amax,
            lambda x, dim=(), keepdim=False: np.amax(x, axis=_dims(dim, x.ndim), keepdims=keepdim),
            REAL,
        )
    )
    add(
        OpInfo(
            "amin",
            _fn("amin"),
            s_amax,
            lambda x, dim=(), keepdim=False: np.amin(x, axis=_dims(dim, x.ndim), keepdims=keepdim),
            REAL,
        )
    )
    add(OpInfo("max_dim", _fn("max_dim"), s_max_dim, _ref_minmax_dim(np.amax, np.argmax), REAL))
    add(OpInfo("min_dim", _fn("min_dim"), s_max_dim, _ref_minmax_dim(np.amin, np.argmin), REAL))
    add(OpInfo("max", _fn("max"), s_minmax, _ref_minmax("max"), REAL, composite=True))
    add(OpInfo("min", _fn("min"), s_minmax, _ref_minmax("min"), REAL, composite=True))
    add(OpInfo("var", _fn("var"), s_var, _ref_var, REAL_COMPLEX))
    add(OpInfo("std", _fn("std"), s_std, lambda *a, **k: np.sqrt(_ref_var(*a, **k)), REAL_COMPLEX))
    add(OpInfo("norm", _fn("norm"), s_norm, _ref_norm, REAL_COMPLEX))
    add(
        OpInfo(
            "logsumexp",
            _fn("logsumexp"),
            s_logsumexp,
            lambda x, dim, keepdim=False: sp.logsumexp(x, axis=_dims(dim, x.ndim), keepdims=keepdim and x.ndim > 0),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "softmax",
            _fn("softmax"),
            s_softmax,
            lambda x, dim: (
                sp.softmax(x, axis=dim % max(x.ndim, 1))
                if x.size and x.ndim
                else (np.ones_like(x) if x.size else x.copy())
            ),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "log_softmax",
            _fn("log_softmax"),
            s_softmax,
            lambda x, dim: (
                sp.log_softmax(x, axis=dim % max(x.ndim, 1))
                if x.size and x.ndim
                else (np.zeros_like(x) if x.size else x.copy())
            ),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "cumsum",
            _fn("cumsum"),
            s_cumsum,
            lambda x, dim: np.cumsum(x, axis=dim % max(x.ndim, 1)) if x.ndim else x.copy(),
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo(
            "cumprod",
            _fn("cumprod"),
            s_cumprod,
            lambda x, dim: np.cumprod(x, axis=dim % max(x.ndim, 1)) if x.ndim else x.copy(),
            REAL_COMPLEX,
        )
    )


def _add_products_and_indexing(add: Callable) -> None:
    """Products, joining, reordering and indexing (with their backward ops)."""
    # linear algebra
    add(OpInfo("matmul", _fn("matmul"), s_matmul, np.matmul, REAL_COMPLEX))
    add(OpInfo("mm", _fn("mm"), s_mm, np.matmul, REAL_COMPLEX))
    add(OpInfo("bmm", _fn("bmm"), s_bmm, np.matmul, REAL_COMPLEX))
    add(OpInfo("dot", _fn("dot"), s_dot, np.dot, REAL_COMPLEX))
    add(OpInfo("outer", _fn("outer"), s_outer, np.outer, REAL_COMPLEX))
    add(OpInfo("einsum", _fn("einsum"), s_einsum, lambda eq, *ts: np.einsum(eq, *ts), REAL_COMPLEX))

    # joining, reordering, indexing
    add(OpInfo("cat", _fn("cat"), s_cat, lambda ts, dim=0: np.concatenate(ts, axis=dim), REAL_COMPLEX))
    add(OpInfo("stack", _fn("stack"), s_stack, lambda ts, dim=0: np.stack(ts, axis=dim), REAL_COMPLEX))
    add(
        OpInfo("flip", _fn("flip"), s_flip, lambda x, dims: np.flip(x, axis=tuple(dims)) if x.ndim else x, REAL_COMPLEX)
    )
    add(OpInfo("roll", _fn("roll"), s_roll, _ref_roll, REAL_COMPLEX))
    add(OpInfo("tril", _fn("tril"), s_tril, lambda x, k=0: np.tril(x, k), REAL_COMPLEX))
    add(OpInfo("triu", _fn("triu"), s_tril, lambda x, k=0: np.triu(x, k), REAL_COMPLEX))
    add(OpInfo("gather", _fn("gather"), s_gather, _ref_gather, REAL_COMPLEX))
    add(OpInfo("_gather_backward", _fn("_gather_backward"), s_gather_backward, _ref_gather_backward, REAL_COMPLEX))
    add(
        OpInfo("index_select", _fn("index_select"), s_index_select, lambda x, d, i: np.take(x, i, axis=d), REAL_COMPLEX)
    )
    add(
        OpInfo(
            "_index_select_backward",
            _fn("_index_select_backward"),
            s_index_select_backward,
            _ref_index_select_backward,
            REAL_COMPLEX,
        )
    )
    add(
        OpInfo("masked_fill", _fn("masked_fill"), s_masked_fill, _ref_masked_fill, REAL_COMPLEX, inplace="masked_fill_")
    )
    add(OpInfo("index", _fn("index"), s_index, lambda x, i: x[i], REAL_COMPLEX))
    add(OpInfo("_index_backward", _fn("_index_backward"), s_index_backward, _ref_index_backward, REAL_COMPLEX))
    add(OpInfo("index_put", _fn("index_put"), s_index_put, _ref_index_put, REAL_COMPLEX, inplace="index_put_"))
    add(OpInfo("_view_scatter", _fn("_view_scatter"), s_view_scatter, _ref_view_scatter, REAL_COMPLEX))
    add(OpInfo("_view_embed", _fn("_view_embed"), s_view_embed, _ref_view_embed, REAL_COMPLEX))


def _add_views(add: Callable) -> None:
    """View ops (and the composites returning several views)."""
    # views
    views = {
        "view": (s_view, lambda x, *s: x.reshape(s[0] if len(s) == 1 and isinstance(s[0], tuple) else s), True),
        "reshape": (
            s_reshape,
            lambda x, *s: x.reshape(s[0] if len(s) == 1 and isinstance(s[0], tuple) else s),
            "maybe",
        ),
        "transpose": (s_transpose, lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x, True),
        "permute": (
            s_permute,
            lambda x, *d: np.transpose(x, d[0] if len(d) == 1 and isinstance(d[0], tuple) else d),
            True,
        ),
        "t": (s_t, lambda x: x.T, True),
        "mT": (s_mT, lambda x: np.swapaxes(x, -1, -2), True),
        "squeeze": (s_squeeze, _ref_squeeze, True),
        "unsqueeze": (s_unsqueeze, lambda x, d: np.expand_dims(x, d), True),
        "expand": (s_expand, _ref_expand, True),
        "flatten": (s_flatten, _ref_flatten, "maybe"),
        "diagonal": (s_diagonal, lambda x, o=0, a=0, b=1: np.diagonal(x, o, a, b), True),
        "narrow": (s_narrow, _ref_narrow, True),
        "select": (s_select, _ref_select, True),
        "getitem": (s_getitem, lambda x, i: x[i], True),
    }
    for name, (sf, ref, v) in views.items():
        add(OpInfo(name, _fn(name), sf, ref, VIEW_DTYPES, is_view=v))
    add(OpInfo("split", _fn("split"), s_split, _ref_split, VIEW_DTYPES, is_view=True, composite=True))
    add(OpInfo("chunk", _fn("chunk"), s_chunk, _ref_chunk, VIEW_DTYPES, is_view=True, composite=True))
    add(
        OpInfo(
            "unbind",
            _fn("unbind"),
            s_unbind,
            lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)),
            VIEW_DTYPES,
            is_view=True,
            composite=True,
        )
    )


def _build() -> dict:
    db: dict[str, OpInfo] = {}

    def add(info: OpInfo) -> None:
        assert info.name not in db, info.name
        db[info.name] = info

    _add_elementwise(add, db)
    _add_non_differentiable(add)
    _add_casts_and_reductions(add)
    _add_products_and_indexing(add)
    _add_views(add)

    # ---- op semantics: 0-d and empty samples, so the generic checks cover them
    for name, extra in _EDGE_SAMPLES.items():
        info = db[name]
        info.sample_fn = _plus(info.sample_fn, extra)

    # ---- nn, sorting, scatter, composites
    register_nn_ops(add)
    # ---- linalg, fft, special: entries in their own module
    add_linalg_ops(add)
    add_fft_ops(add)
    add_special_ops(add)
    add_more_ops(add)
    add_legacy_ops(add)
    register_scipy_ops(add)
    register_numeric_ops(add)
    # ---- matmul's and einsum's primitives; einsum's: two operands, and one or
    # three or more (a list), their samples einsum's split by operand count
    db["einsum"].composite = True
    db["matmul"].composite = True  # over _matmul, choosing what the tape keeps
    # linalg_svdvals' and linalg_eigvals' values-only kernels (nothing differentiates their inputs)
    add(
        OpInfo(
            "_linalg_svdvals",
            _fn("_linalg_svdvals"),
            db["linalg_svdvals"].sample_fn,
            lambda a: np.linalg.svd(a, compute_uv=False),
            REAL_COMPLEX,
            differentiable=False,
        )
    )
    add(
        OpInfo(
            "_linalg_eigvals",
            _fn("_linalg_eigvals"),
            db["linalg_eigvals"].sample_fn,
            lambda a: np.linalg.eigvals(a).astype(np.result_type(a.dtype, np.complex64)),
            REAL_COMPLEX,
            differentiable=False,
        )
    )
    add(OpInfo("_matmul", _fn("_matmul"), s_matmul, np.matmul, REAL_COMPLEX))
    add(
        OpInfo(
            "_einsum_pair",
            _fn("_einsum_pair"),
            _einsum_samples(True),
            lambda eq, a, b: np.einsum(eq, a, b),
            REAL_COMPLEX,
        )
    )
    add(OpInfo("_einsum", _fn("_einsum"), _einsum_samples(False), lambda eq, ts: np.einsum(eq, *ts), REAL_COMPLEX))
    return db


def _einsum_samples(pair: bool):
    def samples(m):
        out = []
        for s in _all_einsum_samples(m):
            if (len(s.args) == 2) == pair:
                out.append(SampleInput(s.input, tuple(s.args) if pair else (list(s.args),), dict(s.kwargs), s.name))
        return out

    return samples


def _all_einsum_samples(m):
    return list(s_einsum(m)) + list(_EDGE_SAMPLES["einsum"](m))


def _plus(sample_fn, extra):
    return lambda m: list(sample_fn(m)) + list(extra(m))


_EDGE_SAMPLES = {
    "logsumexp": lambda m: [
        SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim"),
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
        SampleInput(m((0, 3)), (0,), {}, "empty reduced dim"),
    ],
    "softmax": lambda m: [SampleInput(m((0, 3)), (0,), {}, "empty along dim")],
    "log_softmax": lambda m: [SampleInput(m((0, 3)), (0,), {}, "empty along dim"), SampleInput(m(()), (0,), {}, "0-d")],
    "cumprod": lambda m: [SampleInput(m.tensor(0.0), (0,), {}, "0-d zero")] if m.dtype.kind in "fc" else [],
    "amax": lambda m: [
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
        SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim"),
    ],
    "amin": lambda m: [
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
        SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim"),
    ],
    "max_dim": lambda m: [
        SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim"),
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
    ],
    "min_dim": lambda m: [
        SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim"),
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
    ],
    "prod": lambda m: [SampleInput(m(()), (0,), {"keepdim": True}, "0-d keepdim")],
    "var": lambda m: [
        SampleInput(m(()), (), {"correction": 0}, "0-d"),
        SampleInput(m((0, 3)), (1,), {}, "empty other dim"),
    ],
    "std": lambda m: [SampleInput(m((0, 3)), (1,), {}, "empty other dim")],
    "norm": lambda m: [SampleInput(m((0, 3)), (2, 1), {}, "empty other dim")],
    "gather": lambda m: [SampleInput(m(()), (0, _leaf(np.array(0))), {}, "0-d")],
    "cumsum": lambda m: [SampleInput(m((0, 3)), (0,), {}, "empty along dim")],
    "einsum": lambda m: [SampleInput("ij->", (m((0, 3)),), {}, "empty")],
    "flatten": lambda m: [SampleInput(m((0, 3)), (1, 1), {}, "empty"), SampleInput(m((2, 0, 3)), (0, 1), {}, "empty")],
}


OPS: dict[str, OpInfo] = _build()


# -- coverage ------------------------------------------------------------------------------------------


def yaml_op_names() -> list:
    """Names of every op in derivatives.yaml (from the YAML when pyyaml is there, else the generated code)."""
    try:
        from ..codegen.load import load
    except ImportError:  # no pyyaml: the generated records plus the composites
        names = [v.name for v in vars(ops).values() if type(v).__name__ == "Op"]
        names += [n for n, info in OPS.items() if info.composite]
        return names
    return [e.name for e in load()]


# -- checks --------------------------------------------------------------------------------------------


def _short(e: BaseException) -> str:
    msg = f"{type(e).__name__}: {e}"
    return msg if len(msg) < 4000 else msg[:4000] + " ..."


# The forward formula of an op is compiled twice (over Tensors and over bare arrays) and runs
# inside nested levels over dual primals: each of these is checked on every sample.
FORWARD_FORMS = ("array", "tensor", "nested")


def forward_forms(info: OpInfo) -> tuple:
    """The forms of the op's forward formula that `check_sample` checks: "array" (the default
    path: the array form where one exists), "tensor" (the Tensor form, as when something may
    differentiate the tangent; separate only when an array form exists) and "nested" (inside an
    outer dual level whose tangents the primals carry)."""
    rec = op_record(info.name)
    if info.composite or (rec is not None and rec.jvp_np is not None):
        return FORWARD_FORMS
    return ("array", "nested")


def backward_forms(info: OpInfo) -> tuple:
    """The forms of the op's backward formula that `check_sample` checks: "array" (a plain
    backward pass: the array form where the op has one) and "tensor" (with create_graph, as when
    something differentiates the gradient; separate only when an array form exists)."""
    rec = op_record(info.name)
    return ("array", "tensor") if rec is not None and rec.backward_np is not None else ("array",)


def _forward_form_fn(fn: Callable, form: str, outer: int | None) -> Callable:
    """fn for gradcheck's forward check in the given form (see forward_forms)."""

    if form == "array":

        def g(*xs):
            return fn(*xs)
    elif form == "tensor":

        def g(*xs):
            # a primal that requires grad: its tangent formulas go on the tape, over Tensors
            return fn(
                *[
                    x.requires_grad_() if _is_float_tensor(x) and not x.requires_grad and x._grad_fn is None else x
                    for x in xs
                ]
            )
    else:

        def g(*xs):
            ys = []
            for k, x in enumerate(xs):
                if _is_float_tensor(x):
                    rng = np.random.default_rng(1000 + k)
                    t = rng.standard_normal(x.shape)
                    if x.dtype.kind == "c":
                        t = t + 1j * rng.standard_normal(x.shape)
                    x = fwAD.make_dual(x, wrap(np.asarray(t, dtype=x.dtype)), level=outer)
                ys.append(x)
            return fn(*ys)

    g.__qualname__ = g.__name__ = f"{getattr(fn, '__name__', 'fn')} ({form} form of the forward formula)"
    return g


def check_sample(
    info: OpInfo, sample: SampleInput, *, backward: bool = True, forward: bool = True, fast_mode: bool | None = None
) -> None:
    """gradcheck one sample of an op: backward, then forward in every form of `forward_forms`
    (the array and the Tensor compilation of the formula, and inside an outer level), all
    against one numerical Jacobian. Raises GradcheckError naming the form."""

    fn, inputs = gradcheck_fn(info, sample)

    def form_of(name):
        @contextlib.contextmanager
        def form():
            if name == "nested":
                with fwAD.dual_level() as outer:
                    yield _forward_form_fn(fn, name, outer)
            else:
                yield _forward_form_fn(fn, name, None)

        return form

    forms = [form_of(f) for f in forward_forms(info)] if forward else []
    gradcheck_forms(
        fn,
        inputs,
        forms,
        check_backward_ad=backward,
        backward_forms=backward_forms(info),
        atol=info.atol,
        rtol=info.rtol,
        fast_mode=info.fast_mode if fast_mode is None else fast_mode,
    )
    rec = op_record(info.name)
    if backward and rec is not None and rec.grad_embeds:
        _check_embedded_backward(info, sample)


def check_batched(info: OpInfo, sample: SampleInput) -> None:
    """Vector mode for one sample: B tangents (B in 1, 7 and one of the input's sizes) in one
    batched pass against the jvp of each alone, and B cotangents through one backward pass
    against the vjp of each alone. Raises GradcheckError with the difference."""
    fn, inputs = gradcheck_fn(info, sample)
    if not inputs:
        return
    msg = batched_forward_error(fn, inputs, atol=info.atol, rtol=info.rtol) or batched_backward_error(
        fn, inputs, atol=info.atol, rtol=info.rtol
    )
    if msg is not None:
        raise GradcheckError(msg)


def _check_embedded_backward(info: OpInfo, sample: SampleInput) -> None:
    """A view whose backward only places grad into zeros (`grad_embeds`) has its gradients
    summed in place by the engine; its formula runs when the gradient is differentiated
    (create_graph). gradcheck sees the first; the two must agree."""
    fn, inputs = gradcheck_fn(info, sample)
    outs = fn(*inputs)
    outs = [
        o for o in (outs if isinstance(outs, (tuple, list)) else [outs]) if isinstance(o, Tensor) and o.requires_grad
    ]
    if not outs:
        return
    rng = np.random.default_rng(0)
    gos = [
        wrap(np.asarray(rng.standard_normal(o.shape) * (1 + 1j if o.dtype.kind == "c" else 1), dtype=o.dtype))
        for o in outs
    ]
    plain = grad(outs, list(inputs), gos, retain_graph=True, allow_unused=True)
    graph = grad(outs, list(inputs), gos, create_graph=True, allow_unused=True)
    for k, (a, b) in enumerate(zip(plain, graph)):
        a = np.zeros(inputs[k].shape) if a is None else np.asarray(a._data)
        b = np.zeros(inputs[k].shape) if b is None else np.asarray(b._data)
        if not np.allclose(a, b, rtol=1e-12, atol=1e-12):
            raise GradcheckError(
                f"gradcheck failed for {info.name} in backward mode: the backward formula (run with "
                f"create_graph=True) and the in-place sum of embedded gradients disagree for "
                f"input {k}:\n{b}\nvs\n{a}"
            )


def check_op(
    name: str, *, fast: bool = False, compiled: bool = False, with_complex: bool = True, fast_second: bool = False
) -> dict:
    """Run gradcheck (backward, and forward in every compiled form: `check_sample`),
    gradgradcheck (forward-over-reverse), the complex samples (unless `with_complex` is False: then
    `complex` is None) and vector mode (`check_batched`: batched tangents and cotangents) of op
    `name`; with `compiled`, also gradcheck (forward and backward) of the op run through
    `pf.compile`. `fast_second`: the second-order check in gradcheck's fast mode (random projections
    u^T H v) while first order compares full Jacobians. Values: True (passed), False (failed) or
    None (not applicable or not run); `error` holds the first failure's message."""
    info = OPS[name]
    res = {
        "backward": None,
        "forward": None,
        "fwd_over_rev": None,
        "complex": None,
        "batched": None,
        "taylor": None,
        "kind": info.jvp_kind,
        "error": None,
    }
    if not info.differentiable:
        return res
    fast_mode = fast or info.fast_mode

    def run(key, samples, **kw):
        ok = True
        for s in samples:
            fn, inputs = gradcheck_fn(info, s)
            if not inputs:
                continue
            try:
                if key == "fwd_over_rev":
                    gradgradcheck(
                        fn,
                        inputs,
                        check_rev_over_rev=False,
                        fast_mode=fast_mode or fast_second,
                        atol=info.atol,
                        rtol=info.rtol,
                    )
                elif key == "batched":
                    check_batched(info, s)
                elif key == "compiled":
                    gradcheck(
                        compile_fn(fn),
                        inputs,
                        check_forward_ad=True,
                        fast_mode=fast_mode,
                        atol=info.atol,
                        rtol=info.rtol,
                    )
                else:
                    check_sample(info, s, fast_mode=fast_mode, **kw)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                ok = False
                if res["error"] is None:
                    res["error"] = f"[{key}] {s!r}: {_short(e)}"
        res[key] = ok

    real = [s for s in info.samples(F64) if s.grad]
    run("backward", real, forward=False)
    run("forward", real, backward=False)
    if info.gradgrad:
        run("fwd_over_rev", [s for s in real if s.gradgrad and _numel(s) <= 24][:4])
    if with_complex and info.supports_complex:
        run("complex", [s for s in info.samples(C128) if s.grad])
    run("batched", real[:3])
    if compiled:
        res["compiled"] = None
        run("compiled", real[:3])
    res["taylor"] = check_taylor(info, real[:3], res)
    return res


def check_taylor(info: OpInfo, samples: list, res: dict | None = None, order: int = 4) -> bool | None:
    """The `taylor` column: jet to `order` against as many nested dual levels on each sample (random
    directions, seeded). None when jet refuses the op (no Taylor rule: a NotImplementedError naming
    it); a failure's message goes to res["error"] if that is still empty."""
    for s in samples:
        fn, inputs = gradcheck_fn(info, s)
        if not inputs:
            continue
        xs = [x.detach() for x in inputs]
        rng = np.random.default_rng(0)
        vs = [
            Tensor(rng.standard_normal(x.shape) + (1j * rng.standard_normal(x.shape) if x.is_complex() else 0))
            for x in xs
        ]
        try:
            check_jet(fn, xs, vs, order=order, rtol=info.rtol * 1e-3, atol=info.atol * 1e-4)
        except NotImplementedError as e:
            if str(e).startswith("jet:"):
                return None
            raise
        except Exception as e:  # noqa: BLE001 - every failure is reported
            if res is not None and res["error"] is None:
                res["error"] = f"[taylor] {s!r}: {_short(e)}"
            return False
    return True


def _numel(s: SampleInput) -> int:
    return sum(int(t._data.size) for t in diff_leaves(s))
