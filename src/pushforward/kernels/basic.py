"""NumPy kernels with torch-style signatures, for ops that are not a bare NumPy function.

Each kernel takes ndarrays where the op takes Tensors, and the op's other arguments
under the same names, so formulas can be compiled to kernel calls unchanged.
"""

from __future__ import annotations

import math

from ..core.backend import copy_in_layout_of, in_dim_order, opaque, sp, xp, zeros_for
from ..core.lazy import Seen, as_array, is_lazy_array, unsupported
from ..errors import OpError, OpIndexError, OpValueError, check_dim
from .lazyconst import broadcast_tiny, tiny_graph_of


def _axes(dim, ndim: int):
    """torch `dim` (None, int or sequence) -> NumPy axis, validated against ndim."""
    if dim is None:
        return None
    if ndim > 0:  # (the commonest: dims as ints in range, at once)
        if type(dim) is int:
            if -ndim <= dim < ndim:
                return (dim % ndim,)
        elif type(dim) is tuple:
            axes = []
            for d in dim:
                if type(d) is not int or not -ndim <= d < ndim:
                    break
                axes.append(d % ndim)
            else:
                return tuple(axes)
    dims = (dim,) if isinstance(dim, (int, xp.integer)) else tuple(dim)
    if ndim == 0 and all(d in (0, -1) for d in dims):
        return None
    return tuple(check_dim(d, ndim) for d in dims)


def einsum_pair(equation, a, b):
    """Two-operand einsum with a C-contiguous result, as torch's (NumPy may keep an operand's
    permuted layout; fuzzer: `.view(-1)` of the result failed)."""
    return _contiguous(xp.einsum(equation, a, b))


def _contiguous(a: xp.ndarray) -> xp.ndarray:
    """a in C order (copied only if it is not): torch's results of many ops are contiguous where
    NumPy keeps an input's permuted layout. (xp.ascontiguousarray would make a 0-d array 1-d.)"""
    if type(a) is not xp.ndarray and is_lazy_array(a):
        return a  # a Dask array has chunks, no memory layout
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


def pow(a, b):
    # torch's `number ** x` is its own overload with a contiguous result; its x ** y and x ** number
    # lay the result out as every element-wise op does (elementwise_layout)
    out = xp.power(a, b)
    return out if isinstance(a, xp.ndarray) else _contiguous(out)


def elementwise_layout(out, *inputs):
    """`out`, the result of an element-wise kernel on `inputs`, in the memory layout torch gives
    it. A later reshape is a view or a copy as it is in torch, so whether an in-place write into
    it reaches the result is decided as in torch (docs/design.md, "Memory layout").

    torch orders the result's dims by the inputs' strides, innermost first, by an insertion sort
    whose comparison asks the inputs in order and takes the first one that has an opinion
    (broadcast dims have none); NumPy's order="K" lets C order win any disagreement. The two
    differ only when two inputs of two or more dims disagree, so everything else returns at once.

    >>> import numpy as np
    >>> a = np.ones((3, 4)).T; b = np.ones((4, 3))
    >>> elementwise_layout(np.add(a, b), a, b).strides  # a's layout, as torch's a + b
    (8, 32)
    """
    # (isinstance, not type(...) is: pf.compile traces with an ndarray subclass, which must be laid
    # out as eagerly)
    if not isinstance(out, xp.ndarray) or out.ndim < 2:
        return out
    for x in inputs:  # the common case: every input C-contiguous (or 1-d, or a scalar)
        if isinstance(x, xp.ndarray) and x.ndim > 1 and not x.flags.c_contiguous:
            break
    else:
        return out
    if out.flags.c_contiguous and _c_ordered(inputs):
        return out  # (slices of C arrays, a stencil's `u[1:-1, 2:] - u[1:-1, :-2]`: torch's order is C's)
    # the order depends on shapes and strides only: a loop kernel asks the same question each step
    key = [out.shape, out.strides, out.itemsize]
    planes = 0
    for x in inputs:  # (a loop, not comprehensions: each is a call of its own)
        if isinstance(x, xp.ndarray):
            key += (x.shape, x.strides)
            planes += x.ndim > 1
    if planes < 2:
        return out
    key = tuple(key)
    order = _LAYOUTS.get(key, _UNKNOWN)
    if order is _UNKNOWN:
        order = _torch_order(out, [x for x in inputs if isinstance(x, xp.ndarray)])
        if len(_LAYOUTS) >= 1024:
            _LAYOUTS.clear()
        _LAYOUTS[key] = order
    return out if order is None else in_dim_order(out, order)


def _c_ordered(inputs) -> bool:
    """Every input of two or more dims has positive, strictly decreasing strides: each one that has
    an opinion on the order of two dims (torch's comparison, _elementwise_order) puts them in C
    order, so torch's result is C-contiguous."""
    for x in inputs:
        if isinstance(x, xp.ndarray) and x.ndim > 1:
            s = x.strides
            if x.ndim == 2:  # (the commonest, at once)
                if not 0 < s[1] < s[0]:
                    return False
            elif s[-1] <= 0 or any(s[i] <= s[i + 1] for i in range(len(s) - 1)):
                return False
    return True


_LAYOUTS: dict = {}  # elementwise_layout's answers: (out's shape, strides, itemsize, inputs') -> order
_UNKNOWN = object()


def _torch_order(out, arrays) -> list | None:
    """The dims of `out` outermost first as torch lays out the result of an element-wise op on
    `arrays`, or None when out's strides already are torch's."""
    order = _elementwise_order(out.shape, [_broadcast_strides(x, out.shape) for x in arrays])
    strides = [0] * out.ndim
    step = out.itemsize
    for d in order:
        strides[d] = step
        step *= out.shape[d]
    if all(out.strides[d] == strides[d] for d in range(out.ndim) if out.shape[d] > 1):
        return None
    return order[::-1]


def _broadcast_strides(x, shape) -> list:
    """x's strides against the broadcast `shape`: 0 where x is broadcast (missing or size 1)."""
    lead = len(shape) - x.ndim
    return [0] * lead + [
        0 if n == 1 and shape[lead + i] != 1 else abs(s) for i, (n, s) in enumerate(zip(x.shape, x.strides))
    ]


def _elementwise_order(shape, strides) -> list:
    """The dims of an element-wise result, innermost first, as torch's TensorIterator orders them."""

    def after(d0, d1) -> int:  # 1: d0 goes after (outside) d1, -1: before, 0: no input decides
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:  # equal strides: the smaller dim goes inside
                return 1
        return 0

    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            c = after(order[k], order[j])
            if c > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif c < 0:
                break
    return order


def angle(a):
    return _contiguous(xp.angle(a))  # torch's angle of a complex permuted tensor is contiguous


# -- element-wise ------------------------------------------------------------------------------
def _scaled(b, alpha):
    # A Python scalar times alpha stays a Python (weak) scalar: float32 + 2.5 * 2 stays float32.
    return b * alpha if type(b) in (int, float, complex, bool) else xp.multiply(b, alpha)


def add(a, b, alpha=1):
    return xp.add(a, b) if alpha == 1 else xp.add(a, _scaled(b, alpha))


def sub(a, b, alpha=1):
    return xp.subtract(a, b) if alpha == 1 else xp.subtract(a, _scaled(b, alpha))


def div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return xp.true_divide(a, b)
    if rounding_mode == "floor":
        return xp.floor_divide(a, b)
    if rounding_mode == "trunc":
        q = xp.true_divide(a, b)
        return xp.trunc(q).astype(xp.result_type(a, b), copy=False)
    raise OpError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")


def rsqrt(a):
    return 1.0 / xp.sqrt(a)


def mul0(a, b):
    """a * b, but 0 where a == 0 whatever b (inf, nan): the chain rule's product at a singular
    point (docs/design.md, "Zero cotangents at singular points").

    >>> import numpy as np
    >>> mul0(np.array([0.0, 2.0]), np.array([np.inf, 3.0]))
    array([0., 6.])
    """
    with xp.errstate(invalid="ignore"):
        return xp.where(a == 0, 0, xp.multiply(a, b))


def sigmoid(a):
    if a.dtype.kind == "c":  # scipy's expit is real-only
        return 1.0 / (1.0 + xp.exp(-a))
    return sp.expit(a)


def logit(a, eps=None):
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    return sp.logit(a)


def relu(a):
    return xp.maximum(a, 0)


def sgn(a):
    if a.dtype.kind != "c":
        return xp.sign(a)
    r = xp.abs(a)
    return xp.where(r == 0, 0, a / xp.where(r == 0, 1, r)).astype(a.dtype, copy=False)


def conj(a):
    # Real arrays are their own conjugate: return them as is (the op is then a view).
    return a if a.dtype.kind != "c" else xp.conj(a)


def real(a):
    return a.real


def imag(a):
    if a.dtype.kind != "c":
        raise OpError(f"imag is not implemented for tensors with non-complex dtypes (got {a.dtype})")
    return a.imag


def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise OpError("At least one of 'min' or 'max' must not be None")
    if min is not None:
        a = xp.maximum(a, min)
    if max is not None:
        a = xp.minimum(a, max)
    return a


def round(a, decimals=0):
    return xp.round(a, decimals)


def polygamma(n, a):
    """psi for n = 0, else (-1)^(n+1) n! zeta(n + 1, a): SciPy's own formula on its ufuncs
    (sp.polygamma calls np.asarray on its input, which a Dask array would compute and pf.compile's
    tracer cannot follow; it is also real only, so complex inputs take the Hurwitz zeta of linalg)."""
    if n == 0:
        return sp.psi(a)
    zeta = hurwitz_zeta_complex if xp.iscomplexobj(a) else sp.zeta  # noqa: F405 - from .linalg, below
    return (-1.0) ** (n + 1) * math.gamma(n + 1.0) * zeta(n + 1, a)


def to(a, dtype=None, copy=False):
    if dtype is None:
        return a.copy() if copy else a
    return a.astype(xp.dtype(dtype), copy=copy)


def clone(a):
    return a.copy()


def alias(a):
    return _same(a)


def _same(a):
    """A new view of all of a (a Dask array is immutable: itself)."""
    return a if is_lazy_array(a) else a.view()


def copy_from(a, src):
    """The value `a.copy_(src)` writes: src broadcast to a's shape, in a's dtype."""
    src = as_array(src)
    if a.dtype.kind not in "c" and src.dtype.kind == "c":
        raise OpError(f"copy_: can't copy a complex tensor into one of dtype {a.dtype}")
    if src.shape == a.shape:  # (no broadcast: NumPy's broadcast_to is several Python calls)
        return src.astype(a.dtype, copy=True)
    try:
        return xp.broadcast_to(src, a.shape).astype(a.dtype, copy=True)
    except ValueError:
        raise OpError(f"copy_: source of shape {src.shape} can't be broadcast to shape {a.shape}") from None


def where(condition, a, b):
    return xp.where(as_array(condition, dtype=bool), a, b)


# -- reductions --------------------------------------------------------------------------------
def sum(a, dim=None, keepdim=False, dtype=None):
    # reductions over a permuted input: NumPy keeps its layout, torch's results are contiguous
    if type(a) is xp.ndarray:  # (np.sum's own path, _wrapreduction, costs a microsecond a call)
        r = _add_reduce(a, _axes(dim, a.ndim), dtype, None, keepdim)
        return r if type(r) is not xp.ndarray or r.flags.c_contiguous else xp.ascontiguousarray(r)
    return _contiguous(xp.sum(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=dtype))


_add_reduce = xp.add.reduce
_max_reduce = xp.maximum.reduce
_min_reduce = xp.minimum.reduce


def mean(a, dim=None, keepdim=False, dtype=None):
    if a.dtype.kind not in "fc" and dtype is None:
        raise OpError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {a.dtype}"
        )
    return _contiguous(xp.mean(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=dtype))


def prod(a, dim=None, keepdim=False, dtype=None):
    return _contiguous(xp.prod(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=dtype))


def _no_identity(name: str, a, axes) -> None:
    """Reductions without an identity (max, min, argmax...) over no element: torch's errors. Over
    non-empty reduced dimensions of an empty tensor the result is simply empty."""
    if a.size:
        return
    if axes is None:
        raise OpError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in axes:
        if a.shape[d] == 0:
            raise OpError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def amax(a, dim=(), keepdim=False):
    axes = None if dim == () else _axes(dim, a.ndim)
    _no_identity("amax", a, axes)
    if type(a) is xp.ndarray:  # (as sum: NumPy's own reduction, without _wrapreduction)
        return _contiguous(_max_reduce(a, axes, None, None, keepdim))
    return _contiguous(xp.amax(a, axis=axes, keepdims=keepdim))


def amin(a, dim=(), keepdim=False):
    axes = None if dim == () else _axes(dim, a.ndim)
    _no_identity("amin", a, axes)
    if type(a) is xp.ndarray:
        return _contiguous(_min_reduce(a, axes, None, None, keepdim))
    return _contiguous(xp.amin(a, axis=axes, keepdims=keepdim))


def _extremum_dim(a, dim, keepdim, arg):
    """(values, int64 indices) of the extremum along dim that `arg` (xp.argmax/xp.argmin) picks."""
    d = check_dim(dim, a.ndim)
    if a.ndim == 0:
        return a.copy(), xp.zeros((), xp.int64)
    _no_identity("max" if arg is xp.argmax else "min", a, (d,))
    if a.size == 0:  # empty along other dimensions: empty results
        shape = a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1 :]
        return xp.empty(shape, a.dtype), xp.empty(shape, xp.int64)
    idx = arg(a, axis=d, keepdims=True)
    if is_lazy_array(a):  # (Dask has no take_along_axis; the extremum is the same value)
        vals = (xp.max if arg is xp.argmax else xp.min)(a, axis=d, keepdims=True)
    else:
        vals = xp.take_along_axis(a, idx, axis=d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return vals, idx.astype(xp.int64)


def max_dim(a, dim, keepdim=False):
    return _extremum_dim(a, dim, keepdim, xp.argmax)


def min_dim(a, dim, keepdim=False):
    return _extremum_dim(a, dim, keepdim, xp.argmin)


def _arg_extremum(name, arg, a, dim, keepdim):
    if dim is None:
        _no_identity(name, a, None)
        r = as_array(arg(a), dtype=xp.int64)
        return r.reshape((1,) * a.ndim) if keepdim else r
    d = check_dim(dim, a.ndim)
    if a.ndim == 0:
        return xp.zeros((), xp.int64)
    _no_identity(name, a, (d,))
    if a.size == 0:
        return xp.empty(a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1 :], xp.int64)
    return arg(a, axis=d, keepdims=keepdim).astype(xp.int64, copy=False)


def argmax(a, dim=None, keepdim=False):
    return _arg_extremum("argmax", xp.argmax, a, dim, keepdim)


def argmin(a, dim=None, keepdim=False):
    return _arg_extremum("argmin", xp.argmin, a, dim, keepdim)


def var(a, dim=None, correction=1, keepdim=False):
    ax = _axes(dim, a.ndim)
    return _contiguous(xp.var(a, axis=ax, ddof=correction, keepdims=keepdim))


def std(a, dim=None, correction=1, keepdim=False):
    ax = _axes(dim, a.ndim)
    return _contiguous(xp.std(a, axis=ax, ddof=correction, keepdims=keepdim))


def norm(a, p=2, dim=None, keepdim=False):
    ax = _axes(dim, a.ndim)
    x = xp.abs(a)
    if p == 2:
        return xp.sqrt(xp.sum(x * x, axis=ax, keepdims=keepdim))
    if p == xp.inf:
        return xp.amax(x, axis=ax, keepdims=keepdim)
    if p == -xp.inf:
        return xp.amin(x, axis=ax, keepdims=keepdim)
    if p == 0:
        return xp.sum(x != 0, axis=ax, keepdims=keepdim).astype(x.dtype)
    if p == 1:
        return xp.sum(x, axis=ax, keepdims=keepdim)
    return xp.sum(x**p, axis=ax, keepdims=keepdim) ** (1.0 / p)


def logsumexp(a, dim, keepdim=False):
    axes = _axes(dim, a.ndim)
    if is_lazy_array(a):
        return _lazy_logsumexp(a, axes, keepdim)
    if a.ndim == 0:  # torch: a 0-d input stays 0-d, with or without keepdim
        return as_array(sp.logsumexp(a))
    if a.size == 0:  # SciPy fails on some empty inputs: log(sum(exp(.))) is exact there (-inf or empty)
        with xp.errstate(divide="ignore"):
            return _contiguous(as_array(xp.log(xp.sum(xp.exp(a), axis=axes, keepdims=keepdim))))
    return _contiguous(as_array(sp.logsumexp(a, axis=axes, keepdims=keepdim)))


def _lazy_logsumexp(a, axes, keepdim: bool):
    """logsumexp in array ops (SciPy's converts a Dask array to NumPy): shifted by the finite max."""
    m = xp.max(a, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    r = xp.log(xp.sum(xp.exp(a - m), axis=axes, keepdims=True)) + m
    return r if keepdim or a.ndim == 0 else xp.squeeze(r, axis=tuple(range(a.ndim)) if axes is None else axes)


def softmax(a, dim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype)
    d = check_dim(dim, a.ndim)
    if is_lazy_array(a) and a.ndim == 0:
        return xp.exp(a - a)
    if is_lazy_array(a):
        e = xp.exp(a - xp.max(a, axis=d, keepdims=True))
        return e / xp.sum(e, axis=d, keepdims=True)
    if a.size == 0:  # SciPy has no identity for the max it subtracts: the empty result directly
        return xp.exp(a)
    # (reshaped: SciPy makes a 0-d input 1-d; contiguous: NumPy keeps a permuted layout, torch not)
    return _contiguous(sp.softmax(a, axis=d)).reshape(a.shape)


def log_softmax(a, dim, dtype=None):
    if dtype is not None:
        a = a.astype(dtype)
    d = check_dim(dim, a.ndim)
    if is_lazy_array(a):
        return a - (a if a.ndim == 0 else _lazy_logsumexp(a, d, True))
    if a.size == 0:
        return xp.exp(a)
    return _contiguous(sp.log_softmax(a, axis=d)).reshape(a.shape)


def cumsum(a, dim, dtype=None):
    if a.ndim == 0:  # NumPy flattens 0-d input to shape (1,); torch keeps it 0-d
        check_dim(dim, 0)
        return a.astype(dtype if dtype is not None else xp.cumsum(a[None]).dtype, copy=True)
    # NumPy keeps a permuted input's layout; torch's result is contiguous (so .view(-1) works)
    return _contiguous(xp.cumsum(a, axis=check_dim(dim, a.ndim), dtype=dtype))


def cumprod(a, dim, dtype=None):
    if a.ndim == 0:
        check_dim(dim, 0)
        return a.astype(dtype if dtype is not None else xp.cumprod(a[None]).dtype, copy=True)
    return _contiguous(xp.cumprod(a, axis=check_dim(dim, a.ndim), dtype=dtype))


# -- linear algebra -------------------------------------------------------------------------------
def matmul(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise OpError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    return xp.matmul(a, b)


def _need(name, a, nd):
    if a.ndim != nd:
        raise OpError(f"{name}: expected {nd}-D tensors, got a {a.ndim}-D tensor of shape {a.shape}")


def mm(a, b):
    _need("mm", a, 2)
    _need("mm", b, 2)
    return xp.matmul(a, b)


def bmm(a, b):
    _need("bmm", a, 3)
    _need("bmm", b, 3)
    if a.shape[0] != b.shape[0]:
        raise OpError(f"bmm: batch sizes differ: {a.shape} and {b.shape}")
    return xp.matmul(a, b)


def dot(a, b):
    _need("dot", a, 1)
    _need("dot", b, 1)
    if a.shape != b.shape:
        raise OpError(f"dot: inconsistent tensor size, expected tensors of shape {a.shape} and {b.shape} to match")
    return xp.dot(a, b)


def outer(a, b):
    _need("outer", a, 1)
    _need("outer", b, 1)
    return xp.multiply.outer(a, b)


def einsum(equation, tensors):
    out = xp.einsum(equation, *tensors)
    if len(tensors) == 1 and isinstance(out, xp.ndarray) and out.base is not None:
        # a NumPy view of the operand (a permutation, a diagonal): torch returns that view; we return
        # fresh memory (docs/design.md, "Deviations") laid out as the view, so a later .view works
        # as in torch
        out = out.copy(order="K")
    return out


# -- shape ops ------------------------------------------------------------------------------------
def cat(tensors, dim=0):
    if len(tensors) == 0:
        raise OpValueError("cat: expected a non-empty list of Tensors")
    arrs = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors)
    # torch's results of these ops are contiguous whatever the inputs' layout (NumPy keeps it)
    out = _contiguous(xp.concatenate(arrs, axis=check_dim(dim, arrs[0].ndim)))
    dt = xp.result_type(*tensors)  # a skipped empty input still takes part in type promotion (as torch)
    return out if out.dtype == dt else out.astype(dt)


def stack(tensors, dim=0):
    if len(tensors) == 0:
        raise OpValueError("stack: expected a non-empty list of Tensors")
    return _contiguous(xp.stack(tensors, axis=check_dim(dim, tensors[0].ndim + 1)))


def flip(a, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    # the input's memory layout, as torch's flip (an element-wise kernel) keeps it; a later reshape is
    # then a view or a copy as in torch (fuzzer: flip of a permuted tensor, einsum, add_)
    if type(a) is xp.ndarray and a.ndim == 1 and (dims == (0,) or dims == (-1,)):
        return a[::-1].copy()  # (one dim has one layout: a loop's flip of a row, without the layout's steps)
    if is_lazy_array(a):
        return xp.flip(a, axis=_axes(dims, a.ndim))
    return copy_in_layout_of(xp.flip(a, axis=_axes(dims, a.ndim)), a)


def roll(a, shifts, dims=None):
    if dims is None:
        return xp.roll(a.reshape(-1), shifts).reshape(a.shape)
    return _contiguous(xp.roll(a, shifts, axis=_axes(dims, a.ndim)))


def tril(a, diagonal=0):
    return _contiguous(xp.tril(a, diagonal))


def triu(a, diagonal=0):
    return _contiguous(xp.triu(a, diagonal))


def _index_array(index, name):
    index = as_array(index)
    if index.dtype.kind not in "iu":
        raise OpError(f"{name}(): Expected dtype int64 for index (got {index.dtype})")
    return index


def _gather_positions(shape: tuple, dim, index, name: str) -> tuple:
    """The NumPy index of torch.gather's picks: out[i, j, ...] = a[..., index[i, j, ...], ...] with
    index at `dim` and each other dimension's own position. Unlike take_along_axis, the index is
    never broadcast: it may be smaller than the input in the other dimensions (torch's rule) and
    the result has its shape. A 0-d input counts as one element in one dimension (as torch).
    Returns the positions and the index's shape as used (1-d for a 0-d input)."""
    index = _index_array(index, name)
    nd = max(len(shape), 1)
    d = check_dim(dim, len(shape))
    full = tuple(shape) if shape else (1,)
    if index.ndim != len(shape) and not (len(shape) == 0 and index.ndim <= 1):
        raise OpError(
            f"{name}(): Index tensor must have the same number of dimensions as input tensor "
            f"(got index of shape {index.shape} and input of shape {tuple(shape)})"
        )
    ishape = index.shape if index.ndim == nd else index.reshape(-1).shape
    for k in range(nd):
        if k != d and ishape[k] > full[k]:
            raise OpError(
                f"{name}(): Size does not match at dimension {k}: expected index {list(index.shape)} "
                f"to be no larger than self {list(shape)} apart from dimension {d}"
            )
    if index.size:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= full[d]:
            bad = lo if lo < 0 else hi
            raise OpError(f"{name}(): index {bad} is out of bounds for dimension {d} with size {full[d]}")
    pos = list(xp.ix_(*[xp.arange(n) for n in ishape]))
    pos[d] = index.reshape(ishape)
    return tuple(pos), ishape


@opaque  # (its index check reads the index's values: one recorded call, checked when it runs)
def gather(a, dim, index):
    pos, _ = _gather_positions(a.shape, dim, index, "gather")
    return (a.reshape(-1) if a.ndim == 0 else a)[pos].reshape(xp.shape(index))


@opaque  # (its index check reads the index's values: one recorded call, checked when it runs)
def gather_backward(grad, dim, index, shape):
    pos, ishape = _gather_positions(tuple(shape), dim, index, "gather_backward")
    out = zeros_for(grad, tuple(shape) if shape else (1,))
    xp.add.at(out, pos, xp.reshape(grad, ishape))
    return out.reshape(tuple(shape))


def index_select(a, dim, index):
    index = _index_array(index, "index_select")
    if index.ndim > 1:
        raise OpError(f"index_select(): Index is supposed to be a vector (got shape {index.shape})")
    return xp.take(a, index.reshape(-1), axis=check_dim(dim, a.ndim))


def index_select_backward(grad, dim, index, shape):
    out = zeros_for(grad, shape)
    d = check_dim(dim, len(shape))
    sl = [slice(None)] * len(shape)
    sl[d] = as_array(index).reshape(-1)
    xp.add.at(out, tuple(sl), grad)
    return out


def masked_fill(a, mask, value):
    mask = as_array(mask)
    if mask.dtype != xp.bool_:
        raise OpError(f"masked_fill only supports boolean masks, but got mask with dtype {mask.dtype}")
    value = as_array(value)
    if value.ndim != 0:
        raise OpError(
            f"masked_fill only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)"
        )
    return _contiguous(xp.where(mask, value.astype(a.dtype), a))


def index(a, indices):
    return _contiguous(a[indices])  # torch's advanced-index results are contiguous


def index_backward(grad, shape, indices):
    out = zeros_for(grad, shape)
    xp.add.at(out, indices, grad)
    return out


def index_put(a, indices, values, accumulate=False):
    out = a.copy()
    if accumulate:
        xp.add.at(out, indices, values)
    else:
        out[indices] = values
    return out


# -- views ------------------------------------------------------------------------------------------
def view(a, shape):
    shape = tuple(shape)
    if is_lazy_array(a):  # no strides to respect: a view of a Dask array is its reshape
        return reshape(a, shape)
    try:
        out = a.view()
        out.shape = _infer(shape, a.size)
    except (AttributeError, ValueError) as e:
        if "incompatible" in str(e) or isinstance(e, AttributeError):
            raise OpError(
                f"view size is not compatible with input tensor's size and stride (shape {a.shape} -> "
                f"{shape}); use .reshape(...) instead"
            ) from None
        raise OpError(f"shape {shape} is invalid for input of size {a.size}") from None
    return out


def _infer(shape, size):
    if shape.count(-1) > 1:
        raise OpError("only one dimension can be inferred")
    if -1 in shape:
        known = int(xp.prod([s for s in shape if s != -1]))
        if known == 0 or size % known:
            raise OpError(f"shape {shape} is invalid for input of size {size}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(xp.prod(shape)) != size:
        raise OpError(f"shape {shape} is invalid for input of size {size}")
    return shape


def reshape(a, shape):
    shape = _infer(tuple(shape), a.size)
    if is_lazy_array(a):
        return _lazy_reshape(a, shape)
    return xp.reshape(a, shape)


def _lazy_reshape(a, shape: tuple):
    """Dask reshapes by merging or splitting whole chunks; otherwise the dims that change are first
    put in one chunk (the leading dims that stay keep their chunks)."""
    try:
        return a.reshape(shape)
    except NotImplementedError:
        lead = 0
        while lead < min(a.ndim, len(shape)) and a.shape[lead] == shape[lead]:
            lead += 1
        whole = a.rechunk({d: -1 for d in range(lead, a.ndim)})
        # merging the changing dims into one, then splitting it, is always even
        return whole.reshape(a.shape[:lead] + (-1,)).reshape(shape)


def transpose(a, dim0, dim1):
    if a.ndim == 0:
        return _same(a)
    return xp.swapaxes(a, check_dim(dim0, a.ndim), check_dim(dim1, a.ndim))


def permute(a, dims):
    dims = tuple(dims)
    if len(dims) != a.ndim:
        raise OpError(f"permute(): number of dims don't match in permute: got {len(dims)} dims for a {a.ndim}-D tensor")
    return xp.transpose(a, tuple(check_dim(d, a.ndim) for d in dims))


def t(a):
    if a.ndim > 2:
        raise OpError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a.T


def mT(a):
    if a.ndim < 2:
        raise OpError(f"tensor.mT is only supported on matrices or batches of matrices. Got {a.ndim}-D tensor.")
    return xp.swapaxes(a, -1, -2)


def squeeze(a, dim=None):
    if dim is None:
        return xp.squeeze(a)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    ax = tuple(d for d in (_axes(dims, a.ndim) or ()) if a.shape[d] == 1)
    return xp.squeeze(a, axis=ax) if ax else a.view()


def unsqueeze(a, dim):
    return xp.expand_dims(a, check_dim(dim, a.ndim + 1))


def expand(a, sizes):
    sizes = tuple(sizes)
    if len(sizes) < a.ndim:
        raise OpError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({a.ndim})"
        )
    lead = len(sizes) - a.ndim
    shape = tuple(a.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes))
    try:
        r = _lazy_broadcast(a, shape) if is_lazy_array(a) else xp.broadcast_to(a, shape)
    except ValueError:
        raise OpError(
            f"expand: the expanded size {sizes} must match the existing size {a.shape} at non-singleton dimensions"
        ) from None
    if is_lazy_array(a):
        return r
    # Writable like torch's: a write through a view that selects one copy of each element is
    # fine; inplace._write refuses one whose elements overlap (a zero stride), as torch does.
    return xp.lib.stride_tricks.as_strided(a, r.shape, r.strides, writeable=a.flags.writeable, subok=True)


def _lazy_broadcast(a, shape: tuple):
    """A Dask array broadcast with chunks of the user's chunk size along the new and stretched dims
    (Dask's default is one chunk there: the gradient of a sum, its scalar cotangent expanded to the
    input's shape, would then be one full-size chunk the first op materialises)."""
    import dask.array as da
    from dask.array.core import normalize_chunks

    limit = Seen.chunk_bytes or None  # (None: Dask's configured chunk size)
    if any(s < 0 for s in shape):
        raise ValueError("negative size")
    lead = len(shape) - a.ndim
    grown = [i < lead or (a.shape[i - lead] == 1 and shape[i] != 1) for i in range(len(shape))]
    want = tuple("auto" if g else a.chunks[i - lead] for i, g in enumerate(grown))
    chunks = normalize_chunks(want, shape, limit=limit, dtype=a.dtype)
    tiny = tiny_graph_of(a) if len(chunks) and math.prod(len(c) for c in chunks) > 1 else None
    if tiny is not None:  # (a scalar cotangent: no task shared by every chunk, kernels/lazyconst.py)
        return broadcast_tiny(tiny, shape, chunks, a.dtype)
    return da.broadcast_to(a, shape, chunks=chunks)


def flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = check_dim(start_dim, a.ndim), check_dim(end_dim, a.ndim)
    if s > e:
        raise OpError("flatten() has invalid args: start_dim cannot come after end_dim")
    # the flattened size spelled out: -1 is ambiguous for an empty tensor
    return a.reshape(a.shape[:s] + (math.prod(a.shape[s : e + 1]),) + a.shape[e + 1 :])


def diagonal(a, offset=0, dim1=0, dim2=1):
    d = xp.diagonal(a, offset, check_dim(dim1, a.ndim), check_dim(dim2, a.ndim))
    if isinstance(a, xp.ndarray) and a.flags.writeable:
        d.flags.writeable = True  # NumPy hands out a read-only view; torch's diagonal can be written through
    return d


def narrow(a, dim, start, length):
    d = check_dim(dim, a.ndim)
    n = a.shape[d]
    if start < 0:
        start += n
    if not (0 <= start and length >= 0 and start + length <= n):
        raise OpError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n})")
    sl = [slice(None)] * a.ndim
    sl[d] = slice(start, start + length)
    return a[tuple(sl)]


def select(a, dim, index):
    d = check_dim(dim, a.ndim)
    n = a.shape[d]
    if not -n <= index < n:
        raise OpIndexError(f"select(): index {index} out of range for tensor of size {a.shape} at dimension {d}")
    sl = [slice(None)] * a.ndim
    sl[d] = index
    return a[tuple(sl) + (Ellipsis,)]  # the trailing Ellipsis keeps a 0-d result a view, not a scalar


def getitem(a, index):
    idx = index if isinstance(index, tuple) else (index,)
    for i in idx:  # (a loop, not any(): a generator is a call of its own on indexing's fast path)
        if i is Ellipsis:
            return a[idx]
    return a[idx + (Ellipsis,)]  # 0-d results stay views of `a` (NumPy would return a scalar copy)


def view_region(out, steps):
    """The writeable view of array `out` that the view chain `steps` selects."""
    v = out
    for fn, args in steps:  # steps hold the public view functions; replay their kernels
        v = _ARRAY_VIEW[fn.__name__](v, *args)
        if not v.flags.writeable:  # xp.diagonal is read-only, though its memory is out's
            v.flags.writeable = True
    return v


def write_region(out, src, steps, add: bool = False) -> None:
    """Set (with `add`, increase) the region of array `out` that the view chain `steps` selects to
    src. A chain recorded on a tensor of another memory layout may need strides `out` lacks (a
    `.view` after a transpose of a column-major base, replayed on a C-ordered gradient buffer):
    then the region's elements are found by replaying the chain on their indices, with reshape
    for view (the two select the same elements; only whether memory is shared differs)."""
    try:
        dst = view_region(out, steps)
    except OpError:
        pos = xp.arange(out.size).reshape(out.shape)
        for fn, args in steps:
            name = fn.__name__
            pos = reshape(pos, *args) if name == "view" else _ARRAY_VIEW[name](pos, *args)
        idx = xp.unravel_index(pos, out.shape)
        if add:  # (a writeable view selects each element once: no repeated positions)
            xp.add.at(out, idx, src)
        elif out.flags.c_contiguous:
            xp.put(out, xp.ravel_multi_index(idx, out.shape), src)
        else:
            out[idx] = src
        return
    # (NumPy functions, not `dst[...] = src`: pf.compile's tracer records them, and the write)
    if add:
        xp.add(dst, src, out=dst)
    else:
        xp.copyto(dst, src, casting="unsafe")


def _write_view(out, src, steps):
    write_region(out, src, steps)
    return out


def view_scatter(a, src, steps):
    """a with the region that `steps` (a view chain) selects replaced by src."""
    return _write_view(a.copy(), src, steps)


def view_embed(src, shape, steps):
    """Zeros of `shape` with src written where the view `steps` looks."""
    if is_lazy_array(src):
        return _lazy_embed(src, shape, steps)
    return _write_view(zeros_for(src, shape), src, steps)


def _lazy_embed(src, shape, steps):
    """view_embed for a Dask array, which has no views to write through: each step's embedding,
    innermost first, as a Dask assignment into lazy zeros (the intermediate shapes replayed on a
    zero-stride probe, which costs no memory)."""
    shapes = [tuple(shape)]
    probe = xp.broadcast_to(xp.zeros((), src.dtype), shape)
    for fn, args in steps[:-1]:
        probe = _ARRAY_VIEW[fn.__name__](probe, *args)
        shapes.append(probe.shape)
    out = src
    for (fn, args), shp in zip(reversed(steps), reversed(shapes)):
        out = _embed_step(fn.__name__, args, out, shp)
    return out


def _embed_step(name: str, args: tuple, g, shape: tuple):
    """Zeros of `shape` (lazy) with g where the view op `name`(args) looks."""
    import dask.array as da

    if name == "narrow":
        d, start, length = check_dim(args[0], len(shape)), args[1] % max(shape[args[0]], 1), args[2]
        idx = (slice(None),) * d + (slice(start, start + length),)
    elif name == "select":
        d = check_dim(args[0], len(shape))
        idx = (slice(None),) * d + (args[1] % shape[d],)
    elif name == "diagonal":
        return _diagonal_embed(g, shape, *args)
    elif name == "getitem" and all(
        i is None or i is Ellipsis or isinstance(i, (slice, int)) for i in _index_tuple(args[0])
    ):
        idx, g = _basic_index(_index_tuple(args[0]), len(shape), g)
    else:
        raise unsupported(f"the gradient of {name}", "Dask arrays cannot be written through a view")
    if g.size == 0:
        return da.zeros(shape, dtype=g.dtype)
    if all(type(i) is not slice or i.step in (None, 1) for i in idx):
        return _pad_embed(g, shape, idx)
    out = da.zeros(shape, dtype=g.dtype, chunks=_embed_chunks(g, shape, idx))
    out[idx] = g
    return out


def _pad_embed(g, shape: tuple, idx: tuple):
    """g placed at the unit-step slices and ints `idx` of zeros of `shape`, by zero padding: g keeps
    its chunks, the zeros are a few chunks of their own (a Dask assignment would split every chunk)."""
    import dask.array as da

    widths = []
    for d, n in enumerate(shape):
        i = idx[d] if d < len(idx) else slice(None)
        if type(i) is slice:
            start, stop, _ = i.indices(n)
            widths.append((start, n - max(stop, start)))
        else:
            g = da.expand_dims(g, d)
            widths.append((i % n, n - i % n - 1))
    return da.pad(g, widths) if any(a or b for a, b in widths) else g


def _diagonal_embed(g, shape: tuple, offset=0, dim1=0, dim2=1):
    """Zeros of `shape` with g on the diagonal that diagonal(offset, dim1, dim2) reads: g's
    diag_embed, cut or zero-padded to a non-square shape."""
    import dask.array as da

    nd = len(shape)
    d1, d2 = check_dim(dim1, nd), check_dim(dim2, nd)
    e = diag_embed(g, offset, d1, d2)  # noqa: F405 - from .linalg, star-imported below
    for d in (d1, d2):
        if e.shape[d] > shape[d]:
            e = e[(slice(None),) * d + (slice(0, shape[d]),)]
        elif e.shape[d] < shape[d]:
            e = da.pad(e, [(0, shape[d] - e.shape[d]) if k == d else (0, 0) for k in range(nd)])
    return e


def _basic_index(index: tuple, ndim: int, g):
    """A basic index (ints, slices, None, one Ellipsis) as ints and slices only, and g without the
    size-1 dims its None entries made (what a Dask assignment takes)."""
    named = len([i for i in index if i is not None and i is not Ellipsis])
    full, drop = [], []
    for i in index:
        if i is Ellipsis:
            full.extend([slice(None)] * (ndim - named))
            drop.extend([slice(None)] * (ndim - named))
        elif i is None:
            drop.append(0)
        elif isinstance(i, slice):
            full.append(i)
            drop.append(slice(None))
        else:
            full.append(int(i))
    return tuple(full), (g[tuple(drop)] if 0 in drop else g)


def _index_tuple(index) -> tuple:
    return index if type(index) is tuple else (index,)


def _embed_chunks(g, shape: tuple, idx: tuple) -> tuple:
    """Chunks for the zeros g is embedded into: g's chunk size along the dims it keeps."""
    kept = [d for d in range(len(shape)) if d >= len(idx) or type(idx[d]) is slice]
    sizes = dict(zip(kept, g.chunksize))
    return tuple(sizes.get(d, 1) for d in range(len(shape)))


_ARRAY_VIEW = {}


def register_array_views(table: dict) -> None:
    """Called by the generated module: op name -> kernel, for replaying views on arrays."""
    _ARRAY_VIEW.update(table)


# ---- nn, sorting, scatter, composites
from .sort import cum_extremum_indices, kthvalue, logcumsumexp, mode_indices, sort, topk  # noqa: E402,F401
from .scatter import (  # noqa: E402,F401
    index_add,
    index_copy,
    index_fill,
    scatter,
    scatter_add,
    scatter_count,
    scatter_reduce,
)
from .window import col2im, im2col  # noqa: E402,F401
from .strided import as_strided  # noqa: E402,F401
from .numeric import count_nonzero, ldexp, nan_to_num, searchsorted  # noqa: E402,F401

# ---- linalg, fft, special: kernels live in their own module
from .linalg import *  # noqa: E402,F401,F403
