"""Taylor rules: how one op maps the normalised Taylor coefficients of its inputs to its output's.

A series is the list x = [x_0, x_1, ..., x_K] of normalised coefficients of x(t) = sum_k x_k t^k
(no factorials). Each coefficient is an ordinary tensor (it may carry tangents, require grad or
be batched). A constant input is a list of one coefficient ([x_0]; a Python scalar for a scalar
input); a coefficient `None` is an exact zero. A rule `series_<name>(op, xs, args, K)` gets one
series per Tensor parameter of `op` (a list of series for a `Tensor[]` one) and the op's other
arguments, and returns the output's K + 1 coefficients (`None` entries are zeros), None when it
does not cover these arguments (the derived rule applies), or a dict
{op name: coefficients} when it computes the series of a sibling op on the same inputs too
(sin and cos as a pair). An op names its rule in derivatives.yaml (`taylor: series_exp`);
`pushforward.func.jet` runs them (docs/taylor.md, "Rules").

The recurrences (y = f(x), k >= 1) follow from y' = f'(x) x' read coefficient by coefficient:
exp y_k = (1/k) sum_j j x_j y_{k-j}; log, sqrt, reciprocal, pow, tanh, sigmoid, softmax,
logsumexp, solve and inverse likewise (each rule's docstring gives its own).

>>> import pushforward as pf
>>> from pushforward.ops.generated import EXP
>>> y = series_exp(EXP, [[pf.tensor(0.0), pf.tensor(1.0)]], (), 3)
>>> [round(float(c), 4) for c in y]
[1.0, 1.0, 0.5, 0.1667]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...core.tensor import Tensor
from ...dispatch.classifier import apply
from ...engine.registry import OPS
from ...core.creation import zeros_like
from .common import keep

__all__ = [
    "series_linear",
    "series_bilinear",
    "series_multilinear",
    "series_mul",
    "series_div",
    "series_reciprocal",
    "series_exp",
    "series_log",
    "series_sqrt",
    "series_pow",
    "series_tanh",
    "series_sigmoid",
    "series_sincos",
    "series_softmax",
    "series_log_softmax",
    "series_logsumexp",
    "series_solve",
    "series_inverse",
    "series_det",
    "series_prod",
    "series_cumprod",
    "series_norm",
    "wsum",
    "conv",
    "release_stacks",
]


def _at(x: list, k: int):
    """x_k, None (zero) beyond a constant's single coefficient."""
    return x[k] if k < len(x) else None


def wsum(terms) -> Tensor | None:
    """sum of w * a * b over the (w, a, b) terms whose a and b are not None (None if there are none).

    Plain coefficients (no tangent, no grad, not batched) are summed in one NumPy call; others by
    the library's ops, so that whatever they carry propagates.
    """
    ws, As, Bs = [], [], []
    plain = True
    for w, a, b in terms:
        if a is None or b is None:
            continue
        ws.append(w)
        As.append(a)
        Bs.append(b)
        if plain and not (type(a) is Tensor and not a._ad and type(b) is Tensor and not b._ad):
            plain = False
    if not ws:
        return None
    if plain and len(ws) > 1:
        return _wsum_arrays(ws, [a._data for a in As], [b._data for b in Bs])
    acc = None
    for w, a, b in zip(ws, As, Bs):
        p = a * b if w == 1 else (a * b) * w
        acc = p if acc is None else acc + p
    return acc


def conv(a: list, b: list, k: int, lo: int, hi: int, weight: str | None = None) -> Tensor | None:
    """sum_{j=lo..hi} w_j a_j b_{k-j} (a Cauchy-product term), w_j = 1, j/k ("j") or (k-j)/k ("k-j");
    coefficients beyond a constant's one are zero. None when every term is zero.

    Lists of plain coefficients of one shape are kept as one stacked array each (grown as the list
    grows), so a term is three NumPy calls whatever its length."""
    lo, hi = max(lo, k - len(b) + 1), min(hi, len(a) - 1)
    if lo > hi:
        return None
    n = hi - lo + 1
    if weight is None:
        ws = np.ones(n)
    else:
        ws = (np.arange(lo, hi + 1) if weight == "j" else np.arange(k - lo, k - hi - 1, -1)) / k
    ra = _stacked(a, hi) if n > 1 else None
    rb = _stacked(b, k - lo) if ra is not None else None
    if rb is not None:
        return _wsum_stacked(ws, ra[lo : hi + 1], rb[k - hi : k - lo + 1][::-1])
    return wsum(zip(ws.tolist(), a[lo : hi + 1], b[k - hi : k - lo + 1][::-1]))


# id(list) -> [list, stacked rows (or None: not stackable), rows filled]; emptied after each rule
_STACKS: dict = {}


def release_stacks() -> None:
    """Forget the stacked arrays of conv (func/series.py calls it after each rule)."""
    _STACKS.clear()


def _stacked(lst: list, upto: int) -> np.ndarray | None:
    """Rows 0..upto of lst (plain tensors of one shape and dtype, None for zero) as one array."""
    e = _STACKS.get(id(lst))
    if e is None or e[0] is not lst:
        first = lst[0]
        if not (type(first) is Tensor and not first._ad):
            return None
        d = first._data
        # (empty_like of a coefficient, not np.empty: under pf.compile's tracer the buffer is then a
        # recorded array, and the coefficients written into it stay in the trace)
        e = _STACKS[id(lst)] = [lst, np.empty_like(d, shape=(max(2 * len(lst), 8),) + d.shape), 0]
    buf, filled = e[1], e[2]
    if buf is None:
        return None
    if upto >= len(buf):
        grown = np.empty_like(buf, shape=(2 * (upto + 1),) + buf.shape[1:])
        grown[:filled] = buf[:filled]
        buf = e[1] = grown
    for i in range(filled, upto + 1):
        t = lst[i]
        if t is None:
            buf[i] = 0
        elif type(t) is Tensor and not t._ad and t._data.shape == buf.shape[1:] and t._data.dtype == buf.dtype:
            buf[i] = t._data
        else:
            e[1] = None
            return None
    e[2] = max(filled, upto + 1)
    return buf


def _wsum_stacked(ws: np.ndarray, A: np.ndarray, B: np.ndarray) -> Tensor:
    n, sa, sb = len(ws), A.shape[1:], B.shape[1:]
    if sa != sb:  # pad each side to the same number of dims so that they broadcast per term
        nd = max(len(sa), len(sb))
        A, B = A.reshape((n,) + (1,) * (nd - len(sa)) + sa), B.reshape((n,) + (1,) * (nd - len(sb)) + sb)
    P = A * B
    t = object.__new__(Tensor)
    t._data = (ws.astype(P.real.dtype, copy=False) @ P.reshape(n, math.prod(P.shape[1:]))).reshape(P.shape[1:])
    return t


def _wsum_arrays(ws: list, As: list, Bs: list) -> Tensor:
    n = len(ws)
    sa, sb = As[0].shape, Bs[0].shape
    if not (all(a.shape == sa for a in As) and all(b.shape == sb for b in Bs)):
        sa, sb = np.broadcast_shapes(*(a.shape for a in As)), np.broadcast_shapes(*(b.shape for b in Bs))
        As, Bs = [np.broadcast_to(a, sa) for a in As], [np.broadcast_to(b, sb) for b in Bs]
    nd = max(len(sa), len(sb))
    # stacked along a new first axis, each side padded to nd dims so that they broadcast per term
    P = np.stack(As).reshape((n,) + (1,) * (nd - len(sa)) + sa) * np.stack(Bs).reshape(
        (n,) + (1,) * (nd - len(sb)) + sb
    )
    w = np.asarray(ws, dtype=np.result_type(P.real.dtype, np.float16))
    t = object.__new__(Tensor)
    t._data = (w @ P.reshape(n, math.prod(P.shape[1:]))).reshape(P.shape[1:])
    return t


def _add(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def _sub(a, b):
    if b is None:
        return a
    return -b if a is None else a - b


def _scaled(a, w):
    return None if a is None else a * w


def _call(op, ins, args):
    return apply(op, tuple(ins), tuple(args))


# ---- linear and bilinear ops


def series_linear(op, xs, args, K) -> list:
    """A linear op: each coefficient through its forward formula (which is the op on the tangents):
    y_0 = op(x_0), y_k = J x_k."""
    prims = [_coefficient(op, i, x, 0) for i, x in enumerate(xs)]
    y0 = _call(op, prims, args)
    outs = y0 if op.n_out > 1 else (y0,)
    ys = [[o] for o in outs]
    for k in range(1, K + 1):
        tans = [_coefficient(op, i, x, k) for i, x in enumerate(xs) if op.diff[i]]
        if all(t is None or (type(t) is list and all(v is None for v in t)) for t in tans):
            r = (None,) * len(outs)
        else:
            r = op.jvp(*prims, *tans, *outs, *args)
            r = r if op.n_out > 1 else (r,)
        for y, c in zip(ys, r):
            y.append(c)
    return ys if op.n_out > 1 else ys[0]


def _coefficient(op, i: int, x, k: int):
    """Coefficient k of the input of tensor parameter i (a list of them for a `Tensor[]` one)."""
    if x is None:
        return None
    if op.kinds[i] == "T[]":
        return [_at(s, k) for s in x]
    return _at(x, k)


def series_bilinear(op, xs, args, K) -> list:
    """An op bilinear in its two tensors (matmul, mm, dot, outer, einsum of two): the Cauchy
    product y_k = sum_j op(a_j, b_{k-j})."""
    a, b = xs
    y = []
    for k in range(K + 1):
        acc = None
        for j in range(k + 1):
            aj, bk = _at(a, j), _at(b, k - j)
            if aj is not None and bk is not None:
                acc = _add(acc, _call(op, (aj, bk), args))
        y.append(acc)
    return y


def series_multilinear(op, xs, args, K) -> list:
    """An op linear in each tensor of its list (einsum): y_k = sum over k_1 + ... + k_n = k of
    op(a1_{k_1}, ..., an_{k_n})."""
    (ts,) = xs
    y = []
    for k in range(K + 1):
        acc = None
        for ks in itertools.product(*[range(min(len(s) - 1, k) + 1) for s in ts]):
            if sum(ks) == k and all(s[i] is not None for s, i in zip(ts, ks)):
                acc = _add(acc, _call(op, ([s[i] for s, i in zip(ts, ks)],), args))
        y.append(acc)
    return y


def series_mul(op, xs, args, K) -> list:
    """a * b: the Cauchy product y_k = sum_j a_j b_{k-j}."""
    a, b = xs
    y0 = a[0] * b[0]
    if len(a) == 1 or len(b) == 1:  # times a constant: each coefficient scaled
        c, s = (a[0], b) if len(a) == 1 else (b[0], a)
        return [y0] + [None if v is None else v * c for v in s[1:]]
    return [y0] + [conv(a, b, k, 0, k) for k in range(1, K + 1)]


def series_div(op, xs, args, K) -> list:
    """a / b: y_k = (a_k - sum_{j>=1} b_j y_{k-j}) / b_0 (rounding divisions are piecewise constant)."""
    a, b = xs
    y = [_call(op, (a[0], b[0]), args)]
    if args and args[0] is not None:
        return y
    for k in range(1, K + 1):
        s = conv(b, y, k, 1, k)
        num = _sub(_at(a, k), s)
        y.append(None if num is None else num / b[0])
    return y


def series_reciprocal(op, xs, args, K) -> list:
    """1 / x: y_k = -(sum_{j>=1} x_j y_{k-j}) / x_0."""
    (x,) = xs
    y = [_call(op, (x[0],), args)]
    for k in range(1, K + 1):
        s = conv(x, y, k, 1, k)
        y.append(None if s is None else -(s * y[0]))
    return y


# ---- element-wise recurrences


def _exp_like(x: list, y0, K) -> list:
    """The series y with y' = y x' and y(0) = y0: y_k = (1/k) sum_j j x_j y_{k-j}."""
    y = [y0]
    for k in range(1, K + 1):
        y.append(conv(x, y, k, 1, k, "j"))
    return y


def series_exp(op, xs, args, K) -> list:
    """exp(x): y_k = (1/k) sum_{j=1..k} j x_j y_{k-j}."""
    (x,) = xs
    return _exp_like(x, _call(op, (x[0],), args), K)


def _log_of(x: list, y0, K) -> list:
    y = [y0]
    for k in range(1, K + 1):
        s = conv(x, y, k, 1, k - 1, "k-j")
        num = _sub(_at(x, k), s)
        y.append(None if num is None else num / x[0])
    return y


def series_log(op, xs, args, K) -> list:
    """log(x): y_k = (x_k - (1/k) sum_{j=1..k-1} (k-j) x_j y_{k-j}) / x_0."""
    (x,) = xs
    return _log_of(x, _call(op, (x[0],), args), K)


def series_sqrt(op, xs, args, K) -> list:
    """sqrt(x): y_k = (x_k - sum_{j=1..k-1} y_j y_{k-j}) / (2 y_0)."""
    (x,) = xs
    y = [_call(op, (x[0],), args)]
    # a zero coefficient where y_0 = 0 gives 0, as sqrt's forward formula (docs/design.md, "Zero
    # cotangents at singular points"), so jet and nested dual levels agree
    half_over_y0 = 0.5 / y[0]
    for k in range(1, K + 1):
        num = _sub(_at(x, k), conv(y, y, k, 1, k - 1))
        y.append(None if num is None else OPS.mul0(num, half_over_y0))
    return y


def _power_by_squaring(x: list, n: int, K: int) -> list:
    """x ** n for a non-negative integer n by Cauchy products (exact where x_0 = 0)."""
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else _cauchy(result, base, K)
        n >>= 1
        if n:
            base = _cauchy(base, base, K)
    return result


def _cauchy(a, b, K):
    return [conv(a, b, k, 0, k) for k in range(K + 1)]


def series_pow(op, xs, args, K) -> list:
    """x ** p. Constant p: k x_0 y_k = sum_{j=1..k} (p j - (k - j)) x_j y_{k-j} (a small
    non-negative integer p by repeated products, exact at x_0 = 0); a series exponent:
    y = exp(p log x), with y_0 = x_0 ** p_0."""
    x, p = xs
    y0 = _call(op, (x[0], p[0]), args)
    if len(p) == 1:
        e = p[0]
        if type(e) in (int, float) and float(e).is_integer() and 0 <= e <= 64:
            y = _power_by_squaring(x, int(e), K) if e else [None] * (K + 1)
            return [y0] + y[1:]
        if type(x[0]) is Tensor and not x[0]._ad and not np.all(x[0]._data):
            return None  # x_0 = 0 makes the recurrence 0 / 0: the forward formula's rule instead
        y = [y0]
        for k in range(1, K + 1):
            a = conv(x, y, k, 1, k, "j")
            b = conv(x, y, k, 1, k, "k-j")
            num = _sub(None if a is None else a * e, b)
            y.append(None if num is None else num / x[0])
        return y
    if len(x) == 1:  # constant base: y' = log(x_0) p' y
        log_x = OPS.log(x[0]) if isinstance(x[0], Tensor) else np.log(x[0]).item()
        return _exp_like([None] + [_scaled(c, log_x) for c in p[1:]], y0, K)
    log_x = _log_of(x, OPS.log(x[0]), K)
    return _exp_like(_cauchy(p, log_x, K), y0, K)


def series_tanh(op, xs, args, K) -> list:
    """tanh(x): y' = (1 - y^2) x', with z = 1 - y^2 carried along: z_k = -sum_i y_i y_{k-i}."""
    (x,) = xs
    y = [_call(op, (x[0],), args)]
    z = [1 - y[0] * y[0]]
    for k in range(1, K + 1):
        y.append(conv(x, z, k, 1, k, "j"))
        s = conv(y, y, k, 0, k)
        z.append(None if s is None else -s)
    return y


def series_sigmoid(op, xs, args, K) -> list:
    """sigmoid(x): y' = (y - y^2) x', with z = y - y^2 carried along."""
    (x,) = xs
    y = [_call(op, (x[0],), args)]
    z = [y[0] - y[0] * y[0]]
    for k in range(1, K + 1):
        y.append(conv(x, z, k, 1, k, "j"))
        z.append(_sub(y[k], conv(y, y, k, 0, k)))
    return y


def series_sincos(op, xs, args, K) -> dict:
    """sin and cos of x as a pair: s' = c x', c' = -s x'."""
    (x,) = xs
    s, c = [OPS.sin(x[0])], [OPS.cos(x[0])]
    for k in range(1, K + 1):
        s.append(conv(x, c, k, 1, k, "j"))
        m = conv(x, s, k, 1, k, "j")
        c.append(None if m is None else -m)
    return {"sin": s, "cos": c}


# ---- reductions and normalisations


def _softmax_pair(x: list, dim: int, K: int) -> tuple[list, list]:
    """softmax y and log-softmax u of x along dim: u = x - lse(x), y = exp(u); lse's coefficients
    lse_k = sum_dim (1/k) sum_j j x_j y_{k-j}."""
    u = [OPS.log_softmax(x[0], dim)]
    y = [OPS.softmax(x[0], dim)]
    for k in range(1, K + 1):
        s = conv(x, y, k, 1, k, "j")
        u.append(_sub(x[k], None if s is None else s.sum(dim, keepdim=True)))
        y.append(conv(u, y, k, 1, k, "j"))
    return y, u


def _cast(x: list, dtype) -> list:
    return x if dtype is None else [None if c is None else c.to(dtype) for c in x]


def series_softmax(op, xs, args, K) -> list:
    """softmax(x, dim): y = exp(u), u = x - logsumexp(x) (both recurrences, interleaved)."""
    dim, dtype = args
    return _softmax_pair(_cast(xs[0], dtype), dim, K)[0]


def series_log_softmax(op, xs, args, K) -> list:
    """log_softmax(x, dim): u = x - logsumexp(x), carried with y = exp(u)."""
    dim, dtype = args
    return _softmax_pair(_cast(xs[0], dtype), dim, K)[1]


def series_logsumexp(op, xs, args, K) -> list:
    """logsumexp(x, dim): l_k = sum_dim (1/k) sum_j j x_j s_{k-j} with s = exp(x - l) carried along:
    s_k = (1/k) sum_j j (x_j - l_j) s_{k-j}."""
    (x,) = xs
    dim, keepdim = args
    nd = x[0].ndim
    lse = [_call(op, (x[0],), args)]
    s = [OPS.exp(x[0] - keep(lse[0], dim, keepdim, nd))]
    d = [None]
    for k in range(1, K + 1):
        t = conv(x, s, k, 1, k, "j")
        lse.append(None if t is None else t.sum(dim, keepdim))
        d.append(_sub(x[k], None if lse[k] is None else keep(lse[k], dim, keepdim, nd)))
        s.append(conv(d, s, k, 1, k, "j"))
    return lse


def series_norm(op, xs, args, K) -> list:
    """The 2-norm of a real tensor: sqrt(sum x^2) (sum of the Cauchy square, then sqrt's recurrence).
    Other p and complex inputs: None (the rule derived from the forward formula applies)."""
    (x,) = xs
    p, dim, keepdim = args
    if p != 2 or x[0].dtype.kind == "c":
        return None  # derived from the forward formula instead
    y = [_call(op, (x[0],), args)]
    if x[0].numel() == 0:
        return y  # the norm of nothing: the constant 0
    if type(y[0]) is Tensor and not y[0]._ad and not np.all(y[0]._data):
        return None  # a zero norm (not differentiable there): the forward formula's convention
    dims = dim if dim is not None else list(range(x[0].ndim))
    sq = [None] + [conv(x, x, k, 0, k) for k in range(1, K + 1)]
    sq = [None] + [None if c is None else c.sum(dims, keepdim) for c in sq[1:]]
    two_y0 = 2 * y[0]
    for k in range(1, K + 1):
        num = _sub(sq[k], conv(y, y, k, 1, k - 1))
        y.append(None if num is None else num / two_y0)
    return y


# ---- linear algebra


def _matsum(a: list, y: list, k: int):
    """sum_{j=1..k} a_j @ y_{k-j}."""
    acc = None
    for j in range(1, k + 1):
        aj, yk = _at(a, j), y[k - j]
        if aj is not None and yk is not None:
            acc = _add(acc, aj @ yk)
    return acc


def series_solve(op, xs, args, K) -> list:
    """A^{-1} B: Y_k = A_0^{-1} (B_k - sum_{j>=1} A_j Y_{k-j})."""
    a, b = xs
    y = [_call(op, (a[0], b[0]), args)]
    for k in range(1, K + 1):
        rhs = _sub(_at(b, k), _matsum(a, y, k))
        y.append(None if rhs is None else _call(op, (a[0], rhs), args))
    return y


def series_inverse(op, xs, args, K) -> list:
    """A^{-1}: Y_k = -Y_0 sum_{j>=1} A_j Y_{k-j}."""
    (a,) = xs
    y = [_call(op, (a[0],), args)]
    for k in range(1, K + 1):
        s = _matsum(a, y, k)
        y.append(None if s is None else -(y[0] @ s))
    return y


def series_det(op, xs, args, K) -> list | None:
    """det(A): y' = y tr(A^{-1} A'), so k y_k = sum_{i<k} y_i t_{k-1-i} with t = tr Z and Z = A^{-1} A'
    by solve's recurrence. A plain A_0 that is singular (or nearly): None (its derivatives need the
    adjugate, which reads arrays)."""
    (a,) = xs
    a0 = a[0]
    if type(a0) is Tensor and not a0._ad and a0._data.size:
        cond = np.linalg.cond(a0._data)
        if not np.all(np.isfinite(cond) & (cond < 1e12)):
            return None
    da = [a[j + 1] * (j + 1) for j in range(K)]  # the coefficients of A'(t)
    z: list = []
    for k in range(K):
        rhs = _sub(da[k], _matsum(a, z, k))
        z.append(None if rhs is None else OPS.linalg_solve(a0, rhs))
    t = [None if c is None else c.diagonal(0, -2, -1).sum(-1) for c in z]
    y = [_call(op, (a0,), args)]
    for k in range(1, K + 1):
        s = conv(y, t, k - 1, 0, k - 1)
        y.append(None if s is None else s / k)
    return y


def _running_products(x: list, dim: int, K: int) -> list:
    """The series of x_0, x_0 x_1, ..., the running products along dim (Cauchy products, exact at zeros)."""
    n = x[0].shape[dim] if x[0].ndim else 1
    out, run = [], None
    for i in range(n):
        xi = [c.select(dim, i) if c.ndim else c for c in x]
        run = [c.clone() for c in xi] if run is None else _cauchy(run, xi, K)  # (slices are views of x)
        out.append(run)
    return out


def series_prod(op, xs, args, K) -> list:
    """prod(x, dim): the running Cauchy product of the slices along dim (exact where x_0 has zeros)."""
    (x,) = xs
    dim, keepdim, dtype = args
    y0 = _call(op, (x[0],), args)
    x = _cast(x, dtype)
    if x[0].ndim == 0:  # the product of one number, whatever dim says
        return [y0] + x[1:]
    if dim is None:
        x, dim, keepdim = [c.reshape(-1) for c in x], 0, False
    runs = _running_products(x, dim, K)
    if not runs:
        return [y0]  # an empty product is the constant 1
    y = runs[-1]
    return [y0] + [None if c is None else (c.unsqueeze(dim) if keepdim else c) for c in y[1:]]


def series_cumprod(op, xs, args, K) -> list:
    """cumprod(x, dim): the running Cauchy products along dim, stacked."""
    (x,) = xs
    dim, dtype = args
    y0 = _call(op, (x[0],), args)
    if x[0].ndim == 0:
        return [y0] + x[1:]
    runs = _running_products(_cast(x, dtype), dim, K)
    if not runs:
        return [y0]
    cols = [[r[k] if r[k] is not None else zeros_like(x[0].select(dim, 0)) for r in runs] for k in range(K + 1)]
    return [y0] + [OPS.stack(cols[k], dim) for k in range(1, K + 1)]
