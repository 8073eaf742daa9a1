"""NumPy's mathematical functions over pushforward ops (NumPy semantics, composites: no formulas).

The ufuncs no op of derivatives.yaml answers to (`UFUNC_COMPOSITES`: modf, divmod, vecdot, ...) and the
functions (tensordot, cross, gradient, linspace, cov, ...) that the NEP-18 dispatch
(`pushforward.numpy._api`) and `pushforward.numpy` share.

>>> import pushforward as pf
>>> gradient(pf.tensor([1.0, 2.0, 4.0, 7.0]))
tensor([1. , 1.5, 2.5, 3. ])
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError, check_dim
from ..ops import generated as ops
from ._values import along, as_t, axes_of, floating as _floating, public_functions, reduced


def _np_float(x: Any) -> Tensor:
    # NumPy's float loops read integers and booleans in the smallest float holding them
    x = as_t(x)
    return x if x.dtype.kind in "fc" else x.to(np.promote_types(x.dtype, np.float16))


def _vecdot(a, b, axis=-1):
    # NumPy's gufunc (n),(n)->(): axis is each operand's own, whose sizes must match (no broadcasting
    # along it), and the result keeps the operands' dtype (the sum op's integers would be 64-bit;
    # the cast wraps as NumPy's arithmetic in the narrow dtype does)
    a, b = as_t(a), as_t(b)
    (i,), (j,) = axes_of(axis, a.ndim, "np.vecdot"), axes_of(axis, b.ndim, "np.vecdot")
    if a.shape[i] != b.shape[j]:
        raise OpValueError(
            f"np.vecdot: the vectors along axis {axis} have sizes {a.shape[i]} and {b.shape[j]} "
            f"(shapes {tuple(a.shape)} and {tuple(b.shape)})"
        )
    a, b = ops.movedim(a, i, -1), ops.movedim(b, j, -1)
    out = ops.sum(ops.mul(ops.conj(a) if a.is_complex() else a, b), -1)
    dt = np.result_type(a.dtype, b.dtype)
    return out if out.dtype == dt else ops.to(out, dt, copy=False)


def no_derivative_error(name: str) -> OpTypeError:
    """The error of np.<name> (a ufunc of NO_DERIVATIVE_UFUNCS) on a tensor with a derivative."""
    return OpTypeError(
        f"np.{name} has no derivative (its result is piecewise constant or not real-analytic in its "
        "inputs), so it has no pushforward op; call it on t.detach().numpy()"
    )


def _no_derivative(name: str) -> Callable:
    def f(*args, **kwargs):
        raise no_derivative_error(name)

    return f


# NumPy ufuncs whose results have no derivative (they raise on tensors, naming why)
NO_DERIVATIVE_UFUNCS = ("spacing", "nextafter", "frexp")

# NumPy ufunc name -> a composite of ops computing the same values, for the ufuncs no op answers to:
# two outputs (modf, divmod), products over the last axis (vecdot, matvec, vecmat: einsum), no
# derivative (NO_DERIVATIVE_UFUNCS)
UFUNC_COMPOSITES: dict[str, Callable] = {
    "vecdot": _vecdot,
    "matvec": lambda a, v: ops.einsum("...ij,...j->...i", as_t(a), as_t(v)),
    "vecmat": lambda v, a: ops.einsum("...j,...ji->...i", ops.conj(as_t(v)), as_t(a)),
    "modf": lambda x: (_np_float(x) - ops.trunc(_np_float(x)), ops.trunc(_np_float(x))),
    "rint": lambda x: ops.round(_np_float(x)),
    "divmod": lambda a, b: (ops.div(as_t(a), b, rounding_mode="floor"), ops.remainder(as_t(a), b)),
    **{n: _no_derivative(n) for n in NO_DERIVATIVE_UFUNCS},
}


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tensor:
    """NumPy's tensordot: axes an int or a pair of axis lists."""
    if not isinstance(axes, (int, np.integer)):
        x, y = axes
        axes = ([int(i) for i in np.atleast_1d(x)], [int(i) for i in np.atleast_1d(y)])
    return ops.tensordot(as_t(a), as_t(b), axes)


def kron(a: Any, b: Any) -> Tensor:
    """NumPy's kron (the op's: inputs of fewer dims get leading dims of 1)."""
    return ops.kron(as_t(a), as_t(b))


def dot(a: Any, b: Any, out: Any = None) -> Tensor:
    """NumPy's dot: products for scalars, matmul up to 2-d, a sum over a's last and b's
    second-to-last axis above."""
    if out is not None:
        raise OpTypeError("np.dot: out= is not supported on pushforward tensors")
    if type(a) is Tensor and type(b) is Tensor:
        na, nb = a._data.ndim, b._data.ndim  # (the arrays' own: Tensor.ndim is a call of its own)
    else:  # (a batched tensor's array is its interpreter's: ndim asks it)
        a, b = as_t(a), as_t(b)
        na, nb = a.ndim, b.ndim
    if na == 0 or nb == 0:
        return a * b
    if na <= 2 and nb <= 2:
        return ops.c_matmul(a, b)  # (matmul's body: no out= here)
    return ops.tensordot(a, b, ([na - 1], [max(nb - 2, 0)]))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(sub: Any) -> str:
    return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)


def einsum(*operands: Any, out: Any = None, optimize: Any = False, **kw: Any) -> Tensor:
    """NumPy's einsum, in both its subscript-string and its sublist forms."""
    if out is not None or kw:
        raise OpTypeError(f"np.einsum: arguments {sorted(kw) or ['out']} are not supported on pushforward tensors")
    if isinstance(operands[0], str):
        return ops.einsum(operands[0], *[as_t(o) for o in operands[1:]])
    ins, subs = list(operands[0::2]), list(operands[1::2])
    output = None
    if len(ins) > len(subs):  # the trailing output sublist
        output = ins.pop()
    spec = ",".join(_sublist(s) for s in subs) + ("" if output is None else "->" + _sublist(output))
    return ops.einsum(spec, *[as_t(o) for o in ins])


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    """NumPy's cross product of 3-vectors (or 2-vectors: the z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = ops.movedim(as_t(a), axisa, -1), ops.movedim(as_t(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise OpValueError(
            f"np.cross: incompatible dimensions for cross product (dimension must be 2 or 3), got "
            f"{a.shape[-1]} and {b.shape[-1]}"
        )
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else a0 * 0
    b2 = b[..., 2] if b.shape[-1] == 3 else b0 * 0
    c = ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return ops.movedim(c, -1, axisc)


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tensor:
    """NumPy's sort: the sorted values (flattened when axis is None)."""
    x = as_t(a)
    x, axis = along(x, axis)
    return ops.sort(x, axis)[0]


def partition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect", order: Any = None) -> Tensor:
    """NumPy's partition: the sorted values are a valid partition for every kth."""
    return sort(a, axis)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tensor:
    """NumPy's select: the first true condition's choice."""
    if len(condlist) != len(choicelist):
        raise OpValueError("np.select: list of cases must be same length as list of conditions")
    choices = [as_t(c) for c in choicelist]
    out = as_t(default)
    dt = np.result_type(*[c.dtype for c in choices], out.dtype)
    out = out.to(dt)
    for cond, choice in zip(reversed(condlist), reversed(choices)):
        out = ops.where(as_t(cond), choice.to(dt), out)
    return out


def angle(z: Any, deg: bool = False) -> Tensor:
    """NumPy's angle (in degrees with deg=True)."""
    x = as_t(z)
    r = ops.angle(x if x.is_complex() else _floating(x))
    return r * (180.0 / math.pi) if deg else r


def real_if_close(a: Any, tol: float = 100) -> Tensor:
    """NumPy's real_if_close: the real part when every imaginary part is within tol machine epsilons."""
    x = as_t(a)
    if not x.is_complex():
        return x
    eps = np.finfo(x._data.real.dtype).eps
    t = tol * eps if tol > 1 else tol
    return x.real if bool(np.all(np.abs(x.detach().numpy().imag) < t)) else x


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    """NumPy's nan_to_num: nan, +inf and -inf replaced (by the dtype's largest values by default)."""
    return ops.nan_to_num(as_t(x), nan, posinf, neginf)


def linspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None, axis: int = 0
) -> Any:
    """NumPy's linspace of tensor endpoints (differentiable in start and stop)."""
    if num < 0:
        raise OpValueError(f"np.linspace: number of samples, {num}, must be non-negative")
    start, stop = _floating(as_t(start)), _floating(as_t(stop))
    div = (num - 1) if endpoint else num
    frac = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    shape = np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
    steps = creation.tensor(frac.reshape((-1,) + (1,) * len(shape)))
    out = start + (stop - start) * steps
    if endpoint and num > 1:
        out = ops.cat([out[:-1], (stop + 0 * start).unsqueeze(0)], 0)
    out = ops.movedim(out, 0, axis) if axis != 0 else out
    out = out if dtype is None else out.to(np.dtype(dtype))
    return (out, (stop - start) / div if div > 0 else creation.tensor(np.nan)) if retstep else out


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
    """NumPy's diff: the n-th discrete difference along axis (the op's, with NumPy's scalar
    prepend/append broadcast along the other axes)."""
    x = as_t(a)
    axis = check_dim(axis, x.ndim, "np.diff")
    shape = [1 if i == axis else s for i, s in enumerate(x.shape)]

    def edge(e: Any) -> Tensor | None:
        return None if e is None else (as_t(e).broadcast_to(*shape) if as_t(e).ndim == 0 else as_t(e))

    return ops.diff(x, n, axis, edge(prepend), edge(append))


def _gradient_along(f: Tensor, axis: int, h: float, edge_order: int) -> Tensor:
    n = f.shape[axis]
    if n < edge_order + 1:
        raise OpValueError(
            "np.gradient: shape of array too small to calculate a numerical gradient, "
            "at least (edge_order + 1) elements are required"
        )

    def sl(start, length):
        return ops.narrow(f, axis, start, length)

    interior = (sl(2, n - 2) - sl(0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / h
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / h
    else:
        first = (-1.5 * sl(0, 1) + 2.0 * sl(1, 1) - 0.5 * sl(2, 1)) / h
        last = (0.5 * sl(n - 3, 1) - 2.0 * sl(n - 2, 1) + 1.5 * sl(n - 1, 1)) / h
    return ops.cat([first, interior, last], axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's gradient with uniform (scalar) spacings: central differences inside, one-sided at the edges."""
    x = _floating(as_t(f))
    axes = (
        list(range(x.ndim)) if axis is None else [check_dim(int(a), x.ndim, "np.gradient") for a in np.atleast_1d(axis)]
    )
    if len(varargs) not in (0, 1, len(axes)) or any(np.ndim(v) != 0 for v in varargs):
        raise OpTypeError("np.gradient: only scalar spacings are supported on pushforward tensors")
    hs = [float(varargs[0])] * len(axes) if len(varargs) == 1 else [float(v) for v in varargs] or [1.0] * len(axes)
    out = [_gradient_along(x, a, h, edge_order) for a, h in zip(axes, hs)]
    return out[0] if len(out) == 1 else tuple(out)


def _cov_inputs(m, y, rowvar):
    x = as_t(m)
    if x.ndim > 2:
        raise OpValueError(f"np.cov: m has more than 2 dimensions (shape {tuple(x.shape)})")
    x = _floating(x.reshape(1, -1) if x.ndim < 2 else x)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _floating(as_t(y))
        yy = yy.reshape(1, -1) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = ops.cat([x, yy.to(x.dtype) if yy.dtype != x.dtype else yy], 0)
    return x


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    fweights: Any = None,
    aweights: Any = None,
    *,
    dtype: Any = None,
) -> Tensor:
    """NumPy's cov (in float64, as NumPy): rows are variables unless rowvar=False."""
    x = _cov_inputs(m, y, rowvar)
    x = x if x.is_complex() else x.to(np.dtype(np.float64))
    if ddof is None:
        ddof = 0 if bias else 1
    fw = None if fweights is None else as_t(fweights)
    aw = None if aweights is None else as_t(aweights)
    c = ops.cov(x, correction=int(ddof), fweights=fw, aweights=aw)
    return c if dtype is None else c.to(np.dtype(dtype))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tensor:
    """NumPy's corrcoef (in float64): the covariance normalised by the standard deviations."""
    v = _cov_inputs(x, y, rowvar)
    c = ops.corrcoef(v if v.is_complex() else v.to(np.dtype(np.float64)))
    return c if dtype is None else c.to(np.dtype(dtype))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """NumPy's average, weighted or not."""
    x = _floating(as_t(a))
    if weights is None:
        avg = ops.mean(x, axis, keepdims)
        scl = creation.full_like(avg, x.numel() / max(avg.numel(), 1))
    else:
        w = as_t(weights)
        if w.ndim == 1 and x.ndim > 1 and axis is not None:
            shape = [1] * x.ndim
            shape[int(axis)] = -1
            w = w.reshape(*shape)
        scl = ops.sum(w + 0 * x, axis, keepdims)
        avg = ops.sum(x * w, axis, keepdims) / scl
    return (avg, scl) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """NumPy's ptp: maximum minus minimum."""
    x = as_t(a)
    return reduced(ops.amax, x, axis, keepdims) - reduced(ops.amin, x, axis, keepdims)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """NumPy's trapezoid rule (dx is ignored when x is given, as NumPy)."""
    return ops.trapezoid(as_t(y), None if x is None else as_t(x), dx=None if x is not None else dx, dim=axis)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """NumPy's nansum: nan counted as zero (summed in dtype when given, as NumPy's)."""
    x = as_t(a)
    return reduced(ops.nansum, x if dtype is None else x.to(np.dtype(dtype)), axis, keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """NumPy's nanmean: the mean of the values that are not nan."""
    return reduced(ops.nanmean, _floating(as_t(a)), axis, keepdims)


def sinc(x: Any) -> Tensor:
    """NumPy's sinc: sin(pi x) / (pi x)."""
    return ops.sinc(_floating(as_t(x)))


__all__ = ["UFUNC_COMPOSITES", "NO_DERIVATIVE_UFUNCS", *public_functions(globals())]
