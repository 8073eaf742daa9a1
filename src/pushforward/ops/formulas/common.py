"""Hand-written helpers for derivative formulas too long for one YAML expression.

Every helper is written over pushforward's own differentiable ops, so a derivative of
a derivative comes from nesting. A helper `h` may have an ndarray twin `h_np`; formulas
that use only ops and such helpers are also compiled over plain arrays.
"""

from __future__ import annotations

import numpy as np

from ...core.batched import values_of
from ...core.lazy import is_lazy_array
from ...core.tensor import Tensor
from ...engine.grad_mode import is_grad_enabled
from ...engine.outputs import laid_out  # (the generated formulas are wrapped in it: "Per-output rules")
from ...engine.registry import OPS
from ..composites.util import merges_to_view, scale
from ...core.creation import eye, ones_like, zeros_like
from ...kernels.basic import _add_reduce, _axes, mul0

__all__ = [
    "laid_out",
    "scale",
    "scale_np",
    "fill_zeros",
    "fill_zeros_np",
    "keep",
    "keep_np",
    "sum_backward_np",
    "mean_backward_np",
    "sum_backward",
    "mean_backward",
    "prod_backward",
    "prod_jvp",
    "extremum_backward",
    "extremum_jvp",
    "extremum_jvp_np",
    "index_reduction_backward",
    "index_reduction_jvp",
    "var_backward",
    "var_jvp",
    "var_jvp_np",
    "std_backward",
    "std_jvp",
    "norm_backward",
    "norm_jvp",
    "matmul_backward",
    "gram_pair",
    "gram_pair_np",
    "plus_transpose",
    "plus_transpose_np",
    "outer_pair",
    "outer_pair_np",
    "einsum_backward",
    "einsum_jvp",
    "pow_self_backward",
    "pow_self_backward_np",
    "clamp_mask",
    "clamp_mask_np",
    "max_mask",
    "fmax_mask",
    "fmin_mask",
    "fmax_mask_np",
    "fmin_mask_np",
    "nan_to_num_backward",
    "max_mask_np",
    "logit_backward",
    "angle_backward",
    "scatter_view",
    "inverse_permutation",
    "neg_shifts",
    "split_like",
    "minmax",
    "split_sizes",
    "count_reduced",
    "chunk_sizes",
    "split_offsets",
    "sgn_backward",
    "sgn_jvp",
    "cumprod_backward",
    "cumprod_jvp",
    "replay_view",
    "replay_values",
]


# -- small utilities ---------------------------------------------------------------------------------
scale_np = scale


def fill_zeros(tangents, primals):
    """Replace missing (None) tangents of a list input by zeros of their primal's shape."""
    return [zeros_like(p) if t is None else t for t, p in zip(tangents, primals)]


def fill_zeros_np(tangents, primals):
    return [np.zeros_like(p) if t is None else t for t, p in zip(tangents, primals)]


def _dims(dim, ndim):
    if dim is None or dim == ():
        return tuple(range(ndim))
    # (the kernels' normalising, whose commonest cases take no generator's frames: reductions in loops)
    return tuple(sorted(_axes(dim, ndim))) if ndim else ()


def keep(t, dim, keepdim, ndim):
    """Re-insert the reduced dimensions of a reduction result (so it broadcasts against the input)."""
    if keepdim or ndim == 0:
        return t
    for d in _dims(dim, ndim):
        t = t.unsqueeze(d)
    return t


def keep_np(t, dim, keepdim, ndim):
    if keepdim or ndim == 0:
        return t
    # (np.expand_dims, which pf.compile's simplifier reads as a broadcast seed; _kept is for the extremum's loop)
    return np.expand_dims(t, _dims(dim, ndim))


def _kept(t, dims):
    """Array (or NumPy scalar) t with size-1 dims inserted at the sorted `dims`: np.expand_dims
    without its normalising, a reshape."""
    shape = list(t.shape)
    for d in dims:
        shape.insert(d, 1)
    return t.reshape(shape)


def count_reduced(shape, dim):
    """Number of elements a reduction over `dim` combines."""
    n = 1
    for d in _dims(dim, len(shape)):
        n *= shape[d]
    return n


# -- reductions ---------------------------------------------------------------------------------------
def sum_backward(grad, shape, dim, keepdim):
    return keep(grad, dim, keepdim, len(shape)).expand(shape)


def sum_backward_np(grad, shape, dim, keepdim):
    # (a read-only broadcast view: the engine copies what it would write into, accumulate.exclusive)
    return np.broadcast_to(keep_np(grad, dim, keepdim, len(shape)), shape)


def mean_backward(grad, shape, dim, keepdim):
    return sum_backward(grad, shape, dim, keepdim) / max(count_reduced(shape, dim), 1)


def mean_backward_np(grad, shape, dim, keepdim):
    return sum_backward_np(grad, shape, dim, keepdim) / max(count_reduced(shape, dim), 1)


def _prod_others(x, dim):
    """For each element, the product of the other elements along `dim` (exact with zeros)."""
    n = x.shape[dim]
    if n == 0:
        return x
    one = ones_like(x.narrow(dim, 0, 1))
    left = _cat([one, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    xr = x.flip(dim)
    right = _cat([one, xr.narrow(dim, 0, n - 1)], dim).cumprod(dim).flip(dim)
    return left * right


def _cat(ts, dim):
    return OPS.cat(ts, dim)


def prod_backward(grad, self, result, dim, keepdim):
    if dim is None:
        others = _prod_others(self.reshape(-1), 0).reshape(self.shape)
        return grad * others.conj()
    d = dim % max(self.ndim, 1) if self.ndim else 0
    if self.ndim == 0:
        return grad
    return keep(grad, d, keepdim, self.ndim) * _prod_others(self, d).conj()


def prod_jvp(self_p, self_t, result, dim, keepdim):
    if dim is None:
        others = _prod_others(self_p.reshape(-1), 0).reshape(self_p.shape)
        return (self_t * others).sum()
    if self_p.ndim == 0:
        return self_t
    d = dim % self_p.ndim
    return (self_t * _prod_others(self_p, d)).sum(d, keepdim=keepdim)


def extremum_backward(grad, self, result, dim, keepdim):
    """amax/amin: the gradient is shared evenly among the tied extrema."""
    r = keep(result, dim, keepdim, self.ndim)
    mask = self == r
    g = keep(grad, dim, keepdim, self.ndim)
    count = mask.sum(_dims(dim, self.ndim), keepdim=True)
    return g * mask / count


def extremum_jvp(self_p, self_t, result, dim, keepdim):
    r = keep(result, dim, keepdim, self_p.ndim)
    mask = self_p == r
    dims = _dims(dim, self_p.ndim)
    return (self_t * mask).sum(dims, keepdim=keepdim) / mask.sum(dims, keepdim=keepdim)


def extremum_jvp_np(self_p, self_t, result, dim, keepdim):
    """extremum_jvp over arrays (the ties counted in the tangent's dtype: NumPy's int64 count would
    promote a float32 tangent)."""
    ndim = self_p.ndim
    dims = _dims(dim, ndim)
    mask = self_p == (result if keepdim or ndim == 0 else _kept(result, dims))
    m = self_t * mask
    if type(m) is np.ndarray and type(mask) is np.ndarray:  # (ndarray.sum's Python frames skipped)
        return _add_reduce(m, dims, None, None, keepdim) / _add_reduce(mask, dims, self_t.dtype, None, keepdim)
    return m.sum(dims, keepdims=keepdim) / mask.sum(dims, keepdims=keepdim, dtype=self_t.dtype)


def index_reduction_backward(grad, dim, indices, shape, keepdim):
    """max/min with dim: the gradient goes to the selected index."""
    if len(shape) == 0:
        return grad
    g = grad if keepdim else grad.unsqueeze(dim)
    i = indices if keepdim else indices.unsqueeze(dim)
    return OPS._gather_backward(g, dim, i, shape)


def index_reduction_jvp(self_t, dim, indices, keepdim):
    if self_t.ndim == 0:
        return self_t
    i = indices if keepdim else indices.unsqueeze(dim)
    out = self_t.gather(dim, i)
    return out if keepdim else out.squeeze(dim)


def _var_scale(n, correction):
    """2 / (degrees of freedom) of var's derivative; inf when there are none (n <= correction), so
    the derivative is nan (0 * inf) as torch's, not a ZeroDivisionError; 0 over no element."""
    if n == 0:
        return 0.0
    dof = n - correction
    return 2.0 / dof if dof > 0 else float("inf")


def var_backward(grad, self, dim, correction, keepdim):
    n = count_reduced(self.shape, dim)
    g = keep(grad, dim, keepdim, self.ndim)
    return g * (self - self.mean(_dims(dim, self.ndim), keepdim=True)) * _var_scale(n, correction)


def var_jvp(self_p, self_t, result, dim, correction, keepdim):
    n = count_reduced(self_p.shape, dim)
    dims = _dims(dim, self_p.ndim)
    centered = self_p - self_p.mean(dims, keepdim=True)
    return (centered.conj() * self_t).real.sum(dims, keepdim=keepdim) * _var_scale(n, correction)


def std_backward(grad, self, result, dim, correction, keepdim):
    """std = sqrt(var): var's gradient scaled by 1 / (2 std); zero where std is 0 (torch's subgradient)."""
    zero = result == 0
    return var_backward(OPS.where(zero, 0.0, grad / (2 * OPS.where(zero, 1.0, result))), self, dim, correction, keepdim)


def std_jvp(self_p, self_t, result, dim, correction, keepdim):
    zero = result == 0
    return OPS.where(
        zero, 0.0, var_jvp(self_p, self_t, None, dim, correction, keepdim) / (2 * OPS.where(zero, 1.0, result))
    )


def var_jvp_np(self_p, self_t, result, dim, correction, keepdim):
    n = count_reduced(self_p.shape, dim)
    dims = _dims(dim, self_p.ndim)
    centered = self_p - self_p.mean(dims, keepdims=True)
    return (_conj(centered) * self_t).real.sum(dims, keepdims=keepdim) * _var_scale(n, correction)


def norm_backward(grad, self, p, result, dim, keepdim):
    """Gradient of a vector p-norm; zero where the norm is zero (torch's subgradient)."""
    g = keep(grad, dim, keepdim, self.ndim)
    r = keep(result, dim, keepdim, self.ndim)
    if p == 2:
        return OPS.where(r == 0, 0.0, g * self / OPS.where(r == 0, 1.0, r))
    if p == 1:
        return g * self.sgn()
    if p in (np.inf, -np.inf):
        mask = self.abs() == r
        dims = _dims(dim, self.ndim)
        return g * self.sgn() * mask / mask.sum(dims, keepdim=True)
    if p == 0:
        return g * 0.0 * self.abs()
    a = self.abs()
    return OPS.where(r == 0, 0.0, g * self.sgn() * a.pow(p - 1) / OPS.where(r == 0, 1.0, r).pow(p - 1))


def norm_jvp(self_p, self_t, result, p, dim, keepdim):
    dims = _dims(dim, self_p.ndim)
    direction = norm_backward(ones_like(result), self_p, p, result, dim, keepdim)
    return (direction.conj() * self_t).real.sum(dims, keepdim=keepdim)


def matmul_backward(grad, operand, ndims, which: int):
    """Gradient of matmul for input `which` (0: self, 1: other), all rank cases. `operand` is
    the other input (the one the gradient is multiplied by), `ndims` both inputs' ndim: the
    tape keeps no more than that."""
    a_nd, b_nd = ndims
    g = grad
    if b_nd == 1:  # restore the dims matmul dropped for vector operands (b's first: grad may be 0-d)
        g = g.unsqueeze(-1)
    if a_nd == 1:
        g = g.unsqueeze(-2)
    if which == 0:
        b2 = operand.unsqueeze(-1) if b_nd == 1 else operand
        ga = g @ b2.mT.conj()
        return ga.squeeze(-2) if a_nd == 1 else ga
    a2 = operand.unsqueeze(0) if a_nd == 1 else operand
    gb = a2.mT.conj() @ g
    return gb.squeeze(-1) if b_nd == 1 else gb


def gram_pair(self_p, other_p, self_t, other_t) -> bool:
    """Whether a matrix product's tangent is a Gram product's (gram_pair_np); over Tensors never:
    the Tensor formula (recorded on the tape in the combined case) keeps both products."""
    return False


def gram_pair_np(self_p, other_p, self_t, other_t) -> bool:
    """Whether `self @ other` is a Gram product of arrays (x @ x.T, x.T @ x, np.cov): other is
    self's transpose and other_t self_t's (the same memory, dims and strides reversed). Then its
    tangent self_t @ other + self @ other_t is P + P.T with P = self_t @ other, one product. Only
    exact ndarrays: under pf.compile the compiler's own pass (peephole.gram_products) does it.

    >>> x = np.arange(6.0).reshape(2, 3); t = np.ones((2, 3))
    >>> gram_pair_np(x, x.T, t, t.T), gram_pair_np(x, x.T.copy(), t, t.T)
    (True, False)
    """
    return (
        other_t is not None
        and self_t is not None
        and self_p.ndim == 2  # (the vector case, commonest in loops, at once)
        and _transposes(self_p, other_p)
        and _transposes(self_t, other_t)
    )


def _transposes(a, b) -> bool:
    """b is a.T: 2-D ndarrays over the same memory with dims and strides reversed."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.ndim == 2
        and b.shape == a.shape[::-1]
        and b.strides == a.strides[::-1]
        and (b.base is a or b.base is a.base or b is a.base)
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def plus_transpose(p):
    """p + p.mT (a Gram product's tangent from its first product)."""
    return p + p.mT


def plus_transpose_np(p):
    """p + p.T over arrays."""
    return p + p.T


def outer_pair(a, b, c, d):
    """outer(a, b) + outer(c, d): the tangent of an outer product whose factors both carry one."""
    return OPS.outer(a, b) + OPS.outer(c, d)


def outer_pair_np(a, b, c, d):
    """outer_pair over arrays: as one product of an (n, 2) and a (2, m) matrix when the result is
    not small (it is written once; two outers and their sum write it three times, ~4x slower at
    n = m = 1000).

    >>> outer_pair_np(np.ones(40), np.arange(40.0), np.arange(40.0), np.ones(40))[1, :3]
    array([1., 2., 3.])
    """
    if a.size * b.size < 1024 or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return np.multiply.outer(a, b) + np.multiply.outer(c, d)
    return np.stack([a, c], 1) @ np.stack([b, d])


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(equation, shapes):
    """(operand subscripts, output subscripts) of an einsum equation with the output made explicit
    and '...' spelled out in letters the equation does not use (right-aligned, as NumPy)."""
    eq = equation.replace(" ", "")
    lhs, out = eq.split("->") if "->" in eq else (eq, None)
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: equation has {len(ins)} operands but {len(shapes)} tensors were given")
    ell = ""
    if "..." in lhs:
        free = [c for c in _LETTERS if c not in eq]
        ranks = [len(shape) - (len(sub) - 3) for sub, shape in zip(ins, shapes) if "..." in sub]
        ell = "".join(free[: max(ranks + [0])])
        ins = [
            sub.replace("...", ell[len(ell) - (len(shape) - (len(sub) - 3)) :]) if "..." in sub else sub
            for sub, shape in zip(ins, shapes)
        ]
    if out is None:
        letters = "".join(ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ins, out


def _fit_broadcast(g, shape):
    """g brought to `shape` where einsum broadcast a size-1 dimension: summed where the operand
    has size 1, expanded where only the operand has the full size."""
    for k, (a, b) in enumerate(zip(g.shape, shape)):
        if a != b and b == 1:
            g = g.sum(k, keepdim=True)
    return g.expand(shape) if tuple(g.shape) != tuple(shape) else g


def einsum_backward(grad, equation, tensors, shapes, only=None):
    """Gradients of einsum for every operand: contract grad with the other operands. An operand
    with a repeated index ('ii->i') is read on its diagonal: its gradient is the gradient of that
    diagonal, placed back on it (by an einsum with identity matrices). `tensors` is None for one
    operand: its gradient reads only its shape, so the tape keeps no values (as torch). With
    `only`: the gradient of that operand alone (its own entry of `tensors` is not read)."""
    ins, out = _einsum_parse(equation, shapes)
    grads = []
    for i, sub in enumerate(ins):
        if only is not None and i != only:
            continue
        shape = tuple(shapes[i])
        uniq = "".join(dict.fromkeys(sub))  # the operand's letters, each once (its diagonal)
        ushape = tuple(shape[sub.index(c)] for c in uniq)
        others = [(s, t.conj()) for j, (s, t) in enumerate(zip(ins, tensors or ())) if j != i]
        avail = set(out).union(*[set(s) for s, _ in others]) if others else set(out)
        target = "".join(c for c in uniq if c in avail)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + target
        g = OPS.einsum(eq, grad, *[t for _, t in others])
        if target != uniq:  # indices summed only within this operand: broadcast back
            for k, c in enumerate(uniq):
                if c not in avail:
                    g = g.unsqueeze(k)
        g = _fit_broadcast(g, ushape)
        if uniq != sub:
            free = iter(c for c in _LETTERS if c not in sub and c not in out and all(c not in s for s in ins))
            pos, deltas = [], []
            for k, c in enumerate(sub):
                if sub.count(c) == 1:
                    pos.append(c)
                else:
                    f = next(free)
                    pos.append(f)
                    deltas.append((c + f, eye(shape[k], dtype=g.dtype)))
            g = OPS.einsum(",".join([uniq] + [d for d, _ in deltas]) + "->" + "".join(pos), g, *[e for _, e in deltas])
        grads.append(g)
    return grads if only is None else grads[0]


def einsum_jvp(equation, tensors_p, tensors_t):
    total = None
    for i, t in enumerate(tensors_t):
        if t is None:
            continue
        ops = list(tensors_p)
        ops[i] = t
        term = OPS.einsum(equation, *ops)
        total = term if total is None else total + term
    return total


# -- element-wise -----------------------------------------------------------------------------------
def _constant_exponent(exponent):
    """The exponent as a Python number when it is a constant scalar (the common x ** 2), else None."""
    if (
        type(exponent) is Tensor
        and exponent.ndim == 0
        and not exponent._requires_grad
        and exponent._fw is None
        and not exponent._st.dual
    ):
        return exponent._data.item()
    return None


def pow_self_backward(grad, self, exponent):
    e = _constant_exponent(exponent)
    if e is not None:  # cheap forms for a constant exponent
        if e == 0:
            return grad * 0.0
        if e == 1:
            return grad
        # (grad * e) * self' rather than grad * (e * self'): in forward-over-reverse only self
        # carries a tangent at first, and this way the scaling is not applied to it too.
        ec = e.conjugate() if type(e) is complex else e
        if e != 2 and _singular_at_zero(e):
            # x ** 0.5: an infinite derivative at 0 (docs/design.md, "Zero cotangents at singular points")
            return OPS.mul0(grad * ec, _conj(self.pow(e - 1)))
        return grad * ec * _conj(self if e == 2 else self.pow(e - 1))
    # (the masked branch is made finite too: its derivatives would be 0 * inf = nan at self = 0)
    zero = exponent == 0
    return OPS.where(zero, 0.0, OPS.mul0(grad, (exponent * self.pow(OPS.where(zero, 1.0, exponent) - 1)).conj()))


def _singular_at_zero(e) -> bool:
    """Is x ** e finite at x = 0 with an infinite derivative there (0 < e < 1)?"""
    return type(e) is not complex and 0 < e < 1


def _conj(t):
    """t.conj(), skipping the op call for real tensors (their own conjugate); an array too (no copy
    for a real one, which np.conj would make)."""
    return t.conj() if t.dtype.kind == "c" else t


def pow_self_backward_np(grad, self, exponent):
    if exponent.ndim == 0:
        e = exponent.item()
        if e == 0:
            return grad * 0.0
        if e == 1:
            return grad
        ec = e.conjugate() if type(e) is complex else e
        if e != 2 and _singular_at_zero(e):
            with np.errstate(divide="ignore"):
                return mul0(grad * ec, _conj(np.power(self, e - 1)))
        return grad * ec * _conj(self if e == 2 else np.power(self, e - 1))
    with np.errstate(all="ignore"):
        return np.where(exponent == 0, 0.0, mul0(grad, _conj(exponent * np.power(self, exponent - 1))))


def clamp_mask(self, min, max):
    """1 where clamp passes self through, else 0."""
    m = None
    if min is not None:
        m = self >= min
    if max is not None:
        m = (self <= max) if m is None else m & (self <= max)
    return m


clamp_mask_np = clamp_mask


def max_mask(a, b):
    """Share of the gradient maximum(a, b) sends to a: 1 where a > b, 1/2 at ties."""
    return (a > b) + (a == b) * 0.5


def max_mask_np(a, b):
    """max_mask on arrays: the bool `a > b` when there is no tie (the commonest: relu's
    `maximum(x, 0)`), so that the tangent keeps its dtype (the 1/2 is a float64: a float32
    tangent would be cast back). A traced array (pf.compile) takes max_mask: no branch on values.

    >>> max_mask_np(np.array([1.0, 2.0]), np.array([2.0, 1.0])), max_mask_np(np.array([1.0]), np.array([1.0]))
    (array([False,  True]), array([0.5]))
    """
    m = a > b
    if type(m) is not np.ndarray:
        return max_mask(a, b)
    tie = a == b
    return m + tie * 0.5 if tie.any() else m


def fmax_mask(a, b):
    """Where fmax(a, b) picks a: a >= b, or b is NaN (ties go to a, as torch's fmax)."""
    return (a >= b) | (b != b)


def fmin_mask(a, b):
    """Where fmin(a, b) picks a: a <= b, or b is NaN (ties go to a, as torch's fmin)."""
    return (a <= b) | (b != b)


fmax_mask_np = fmax_mask
fmin_mask_np = fmin_mask


def nan_to_num_backward(grad, self):
    """grad where self is finite, 0 where nan_to_num replaced it (a complex number's parts apart)."""
    if self.dtype.kind != "c":
        return grad * OPS.isfinite(self)
    return grad.real * OPS.isfinite(self.real) + 1j * (grad.imag * OPS.isfinite(self.imag))


def logit_backward(grad, self, eps):
    if eps is None:  # (outside [0, 1] logit is nan, and so is its derivative, as torch gives it)
        return OPS.where((self < 0) | (self > 1), float("nan"), grad / (self * (1 - self)))
    # (the clamped points divide a safe value: their derivatives would be 0 * inf = nan at 0 and 1)
    out = (self < eps) | (self > 1 - eps)
    safe = OPS.where(out, 0.5, self)
    return OPS.where(out, 0.0, grad / (safe * (1 - safe)))


def angle_backward(grad, self):
    if self.dtype.kind != "c":
        return grad * 0.0
    return OPS.where(self == 0, 0.0, grad * self / OPS.where(self == 0, 1.0, self.abs().pow(2)) * 1j)


# -- views and shapes -------------------------------------------------------------------------------
def scatter_view(grad, shape, op_name, args):
    """Gradient of a view op: grad placed into zeros of the base's shape, where the view looks."""
    return OPS._view_embed(grad, tuple(shape), ((getattr(OPS, op_name), tuple(args)),))


def inverse_permutation(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return tuple(inv)


def neg_shifts(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


def split_like(grad, shapes, dim):
    """Split grad along dim into pieces of the given shapes (cat's backward: the inputs'
    shapes, so the tape keeps only those)."""
    out = []
    start = 0
    d = dim % grad.ndim
    for shape in shapes:
        if len(shape) == 1 and shape[0] == 0 and grad.ndim != 1:
            out.append(None)
            continue
        n = shape[d]
        out.append(grad.narrow(d, start, n))
        start += n
    return out


def split_sizes(size, split_size_or_sections):
    """torch.split semantics: an int chunk size or explicit section sizes."""
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0:
            raise ValueError(f"split expects split_size be non-negative, but got split_size={s}")
        return [min(s, size - i) for i in range(0, size, s)] or [0]
    sizes = list(split_size_or_sections)
    if sum(sizes) != size:
        raise ValueError(f"split_with_sizes expects split_sizes to sum exactly to {size} (got {sizes})")
    return sizes


def chunk_sizes(size, chunks):
    if chunks <= 0:
        raise ValueError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    step = -(-size // chunks) if size else 1
    return split_sizes(size, step) if size else [0]


def minmax(self, dim, keepdim, which):
    """max/min overloads: full reduction, (values, indices) along dim, or element-wise with a tensor."""
    if dim is None:
        return OPS.amax(self) if which == "max" else OPS.amin(self)
    if isinstance(dim, Tensor):
        return OPS.maximum(self, dim) if which == "max" else OPS.minimum(self, dim)
    return OPS.max_dim(self, dim, keepdim) if which == "max" else OPS.min_dim(self, dim, keepdim)


def split_offsets(size, split_size_or_sections):
    """(start, length) of each piece torch.split makes."""
    out = []
    start = 0
    for n in split_sizes(size, split_size_or_sections):
        out.append((start, n))
        start += n
    return out


def sgn_backward(grad, self, result):
    """sgn(z) = z/|z| is R-linear-ly self-adjoint: (g - s Re(conj(s) g)) / |z|; zero for reals."""
    if self.dtype.kind != "c":
        return grad * 0.0
    r = self.abs()
    return OPS.where(r == 0, 0.0, (grad - result * (result.conj() * grad).real) / OPS.where(r == 0, 1.0, r))


def sgn_jvp(self_p, self_t, result):
    return sgn_backward(self_t, self_p, result)


def _others_matrix(x):
    """C[..., k, j] = prod of x_i for i <= j, i != k, kept for j >= k (cumprod's Jacobian), x's dim last."""
    n = x.shape[-1]
    diag = eye(n, dtype=bool)
    xe = x.unsqueeze(-2).expand(*x.shape[:-1], n, n)
    return OPS.where(diag, 1.0, xe).cumprod(-1).triu()


def _has_zero(t) -> bool:
    """Whether t has a zero (True for a lazy tensor, whose values are unknown: the exact path)."""
    v = values_of(t)
    return type(v) is not np.ndarray or bool((v == 0).any())


def cumprod_backward(grad, self, result, dim):
    """Gradient of cumprod along dim; exact when self has zeros (an O(n^2) path then)."""
    if self.numel() == 0 or self.ndim == 0:  # 0-d: cumprod is the identity
        return grad
    if not _has_zero(self):
        return (grad * result.conj()).flip(dim).cumsum(dim).flip(dim) / self.conj()
    x = self.transpose(dim, -1)
    g = grad.transpose(dim, -1)
    c = _others_matrix(x)
    return (c.conj() * g.unsqueeze(-2)).sum(-1).transpose(dim, -1)


def cumprod_jvp(self_p, self_t, result, dim):
    if self_p.numel() == 0 or self_p.ndim == 0:
        return self_t
    if not _has_zero(self_p):
        return (self_t / self_p).cumsum(dim) * result
    x = self_p.transpose(dim, -1)
    t = self_t.transpose(dim, -1)
    c = _others_matrix(x)
    return (c * t.unsqueeze(-1)).sum(-2).transpose(dim, -1)


from ...engine.tangents import replay_values, replay_view  # noqa: E402  (formulas replay view chains)


# ---- nn, sorting, scatter, composites
# The bodies of composite ops and the longer derivative helpers live in small modules of their
# own; they are re-exported here so that derivatives.yaml can call them.
from ..composites import conv_pool_pad as _conv_pool_pad, nn as _nn, shape as _shape, sort as _sort  # noqa: E402
from . import scatter as _scatter  # noqa: E402
from ..composites.shape import *  # noqa: E402,F401,F403
from ..composites.sort import *  # noqa: E402,F401,F403
from .scatter import *  # noqa: E402,F401,F403
from ..composites.conv_pool_pad import *  # noqa: E402,F401,F403
from ..composites.nn import *  # noqa: E402,F401,F403
from ..composites import out as _out, strided as _strided  # noqa: E402
from ..composites.out import *  # noqa: E402,F401,F403
from ..composites.strided import *  # noqa: E402,F401,F403
from ..composites import numeric as _numeric  # noqa: E402
from ..composites.numeric import *  # noqa: E402,F401,F403

# ---- linalg, fft, special: helpers live in their own module
from . import linalg as _linalg  # noqa: E402
from .linalg import *  # noqa: E402,F401,F403

for _m in (_shape, _sort, _scatter, _conv_pool_pad, _nn, _linalg, _strided, _out, _numeric):
    __all__ += _m.__all__


# ---- einsum of two operands
__all__ += ["c_einsum"]


def c_einsum(equation, tensors):
    """einsum: two operands go to their own primitive (the tape keeps for each operand only the
    other one, so an in-place write into an operand whose gradient reads only the other one is no
    error, as in torch); other counts to the list primitive."""
    if len(tensors) == 2:
        a, b = tensors
        if (a._requires_grad or b._requires_grad) and is_grad_enabled():
            copy_a, copy_b = _einsum_torch_copies(equation, a, b)
            # keep a copy where torch's contraction does (the other operand's gradient reads it)
            a = a.clone() if copy_a and b._requires_grad else a
            b = b.clone() if copy_b and a._requires_grad else b
        return OPS._einsum_pair(equation, a, b)
    return OPS._einsum(equation, list(tensors))


def _einsum_torch_copies(equation, a, b) -> tuple[bool, bool]:
    """Does torch's two-operand einsum contract a copy of a (of b) rather than a view? Its
    contraction sums out a label found in one operand only (a new tensor), or permutes each
    operand to (batch, free, summed) labels in (output, then alphabetical) order and flattens
    each group, a copy where the group's dims are not laid out contiguously; with nothing summed
    over both it multiplies the operands themselves."""
    try:
        ins, out = _einsum_parse(equation, [a.shape, b.shape])
    except ValueError:
        return False, False
    if any(len(set(sub)) != len(sub) for sub in ins):  # diagonals: views, kept as torch keeps them
        return False, False
    ts = (a, b)
    big = [{c for c, n in zip(sub, t.shape) if n != 1} for sub, t in zip(ins, ts)]
    order = list(out) + sorted(set(ins[0] + ins[1]) - set(out), key=_LETTERS.index)
    summed = [c for c in order if c not in out and c in big[0] and c in big[1]]
    if not summed:
        return tuple(bool((big[k] - big[1 - k]) - set(out)) for k in (0, 1))  # (a product)
    lro = [c for c in order if c in out and c in big[0] and c in big[1]]

    def copies(k):
        if (big[k] - big[1 - k]) - set(out):
            return True  # summed out first
        free = [c for c in order if c in out and c in big[k] and c not in big[1 - k]]
        if type(ts[k]) is not Tensor:
            return True  # batched (vmap) or interpreted: no memory layout of its own to follow; a copy is safe
        arr = ts[k]._data
        if type(arr) is not np.ndarray and is_lazy_array(arr):  # a Dask array: no memory layout to follow
            return True
        for group in (lro, free, summed):
            dims = [ins[k].index(c) for c in group]
            if not merges_to_view([arr.shape[d] for d in dims], [arr.strides[d] for d in dims]):
                return True
        return False

    return copies(0), copies(1)
