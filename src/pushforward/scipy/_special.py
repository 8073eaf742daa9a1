"""SciPy's special functions on tensors, differentiable in both modes (pushforward.scipy.special,
and the scipy.special ufuncs called on tensors: `SCIPY_UFUNCS`).

Names and argument orders are SciPy's. Functions of an order and an argument (iv, jv, yn,
gammainc, betainc, ...) are differentiable in the argument; differentiating the order raises
NotImplementedError naming it. `logsumexp` takes SciPy's `b`, `axis`, `keepdims` and
`return_sign`.

>>> import pushforward as pf
>>> pf.func.grad(lambda x: gammaln(x))(pf.tensor(3.0))
tensor(0.92278434)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as _sp

from ..core.tensor import Tensor
from ..ops import generated as ops
from ..ops.formulas.linalg import series_near
from ..numpy._values import public_functions
from ._common import as_float, refuse_derivative


def _unary(op):
    def f(x: Any) -> Tensor:
        return op(as_float(x))

    return f


gammaln = _unary(ops.lgamma)
digamma = psi = _unary(ops.digamma)
erf = _unary(ops.erf)
erfc = _unary(ops.erfc)
erfinv = _unary(ops.erfinv)
erfcx = _unary(ops.special_erfcx)
ndtr = _unary(ops.special_ndtr)
ndtri = _unary(ops.special_ndtri)
log_ndtr = _unary(ops.special_log_ndtr)
expit = _unary(ops.sigmoid)
logit = _unary(ops.logit)
entr = _unary(ops.special_entr)
exp2 = _unary(ops.exp2)
expm1 = _unary(ops.expm1)
log1p = _unary(ops.log1p)
i0 = _unary(ops.special_i0)
i0e = _unary(ops.special_i0e)
i1 = _unary(ops.special_i1)
i1e = _unary(ops.special_i1e)
j0 = _unary(ops.special_bessel_j0)
j1 = _unary(ops.special_bessel_j1)
y0 = _unary(ops.special_bessel_y0)
y1 = _unary(ops.special_bessel_y1)
k0 = _unary(ops.special_modified_bessel_k0)
k1 = _unary(ops.special_modified_bessel_k1)
k0e = _unary(ops.special_scaled_modified_bessel_k0)
k1e = _unary(ops.special_scaled_modified_bessel_k1)
exp1 = _unary(ops.special_exp1)
expi = _unary(ops.special_expi)
spence = _unary(ops.special_spence)
ellipk = _unary(ops.special_ellipk)
ellipe = _unary(ops.special_ellipe)


def loggamma(x: Any) -> Tensor:
    """log(gamma(x)) for real x > 0 (scipy.special.loggamma's real branch)."""
    return ops.lgamma(as_float(x))


def sinc(x: Any) -> Tensor:
    """sin(pi x) / (pi x) (scipy.special.sinc is NumPy's)."""
    return ops.sinc(as_float(x))


def exp10(x: Any) -> Tensor:
    """10 ** x."""
    return ops.pow(10.0, as_float(x))


def log_expit(x: Any) -> Tensor:
    """log(expit(x)), computed stably."""
    return -ops.softplus(-as_float(x))


def gammasgn(x: Any) -> Tensor:
    """The sign of the gamma function (piecewise constant: its derivative is zero)."""
    t = as_float(x).detach()
    fl = ops.floor(t)
    # gamma is positive for x > 0 and alternates between the poles below: negative on (-1, 0),
    # positive on (-2, -1), ...; NaN at the poles and -inf; at a zero, the zero's sign
    below = ops.where(t == fl, float("nan"), ops.where(ops.remainder(fl, 2) == 1, -1.0, 1.0))
    out = ops.where(t > 0, 1.0, ops.where(t == 0, ops.copysign(t * 0 + 1, t), below))
    return ops.where(ops.isnan(t), t, out)


def gamma(x: Any) -> Tensor:
    """The gamma function: gammasgn(x) exp(gammaln(x))."""
    t = as_float(x)
    return gammasgn(t) * ops.exp(ops.lgamma(t))


def rgamma(x: Any) -> Tensor:
    """1 / gamma(x) (zero at the poles)."""
    t = as_float(x)
    return gammasgn(t) * ops.exp(-ops.lgamma(t))


def polygamma(n: Any, x: Any) -> Tensor:
    """The n-th derivative of digamma at x (n a non-negative integer)."""
    refuse_derivative("scipy.special.polygamma", "n", n)
    nn = np.asarray(n.detach().numpy() if isinstance(n, Tensor) else n)
    if nn.ndim == 0:
        return ops.polygamma(int(nn), as_float(x))
    t = as_float(x)
    parts = [ops.polygamma(int(k), xi) for k, xi in _pairs(nn, t)]
    return ops.stack(parts).reshape(*np.broadcast_shapes(nn.shape, tuple(t.shape)))


def _pairs(nn: np.ndarray, t: Tensor) -> list:
    shape = np.broadcast_shapes(nn.shape, tuple(t.shape))
    tb = t.broadcast_to(*shape).reshape(-1)
    return list(zip(np.broadcast_to(nn, shape).reshape(-1), [tb[i] for i in range(tb.shape[0])]))


def multigammaln(a: Any, d: int) -> Tensor:
    """The log of the multivariate gamma function of dimension d."""
    return ops.mvlgamma(as_float(a), int(d))


def betaln(a: Any, b: Any) -> Tensor:
    """log |B(a, b)|."""
    return ops.special_betaln(as_float(a), as_float(b))


def beta(a: Any, b: Any) -> Tensor:
    """The beta function gamma(a) gamma(b) / gamma(a + b)."""
    a, b = as_float(a), as_float(b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * ops.exp(ops.special_betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Tensor:
    """The regularised incomplete beta function I_x(a, b); differentiable in x."""
    refuse_derivative("scipy.special.betainc", "a", a)
    refuse_derivative("scipy.special.betainc", "b", b)
    return ops.special_betainc(as_float(a), as_float(b), as_float(x))


def gammainc(a: Any, x: Any) -> Tensor:
    """The regularised lower incomplete gamma function P(a, x); differentiable in x."""
    refuse_derivative("scipy.special.gammainc", "a", a)
    return ops.special_gammainc(as_float(a), as_float(x))


def gammaincc(a: Any, x: Any) -> Tensor:
    """The regularised upper incomplete gamma function Q(a, x); differentiable in x."""
    refuse_derivative("scipy.special.gammaincc", "a", a)
    return ops.special_gammaincc(as_float(a), as_float(x))


def erfcinv(y: Any) -> Tensor:
    """The inverse of erfc: erfinv(1 - y)."""
    return ops.erfinv(1.0 - as_float(y))


def xlogy(x: Any, y: Any) -> Tensor:
    """x log(y), 0 where x == 0."""
    return ops.xlogy(as_float(x), as_float(y))


def xlog1py(x: Any, y: Any) -> Tensor:
    """x log1p(y), 0 where x == 0."""
    return ops.special_xlog1py(as_float(x), as_float(y))


def zeta(x: Any, q: Any = None) -> Tensor:
    """The Hurwitz zeta function (Riemann's when q is None); differentiable in q."""
    refuse_derivative("scipy.special.zeta", "x", x)
    return ops.special_zeta(as_float(x), as_float(1.0 if q is None else q))


def _order(who: str, op, v: Any, x: Any) -> Tensor:
    refuse_derivative(f"scipy.special.{who}", "v (the order)", v)
    return op(as_float(v), as_float(x))


def _of_order(op, doc: str):
    """A function of an order and an argument, differentiable in the argument (named below)."""

    def f(v: Any, z: Any) -> Tensor:
        return _order(f.__name__, op, v, z)

    f.__doc__ = doc
    return f


_FIRST, _SECOND = "The Bessel function of the first kind", "The Bessel function of the second kind"
iv = _of_order(ops.special_iv, "The modified Bessel function of the first kind of real order v; differentiable in z.")
ive = _of_order(ops.special_ive, "iv(v, z) exp(-|z|); differentiable in z.")
jv = _of_order(ops.special_jv, _FIRST + " of real order v; differentiable in z.")
yv = _of_order(ops.special_yv, _SECOND + " of real order v; differentiable in z.")
jn = _of_order(ops.special_jv, _FIRST + " of integer order n; differentiable in x.")
yn = _of_order(ops.special_yv, _SECOND + " of integer order n; differentiable in x.")
expn = _of_order(ops.special_expn, "The generalised exponential integral E_n(x), integer n >= 0; differentiable in x.")


def spherical_jn(n: int, z: Any, derivative: bool = False) -> Tensor:
    """The spherical Bessel function of the first kind, sqrt(pi / (2 z)) J_{n + 1/2}(z)."""
    z = as_float(z)
    if derivative:
        n = int(n)
        return (n * spherical_jn(n - 1, z) - (n + 1) * spherical_jn(n + 1, z)) / (2 * n + 1)
    return ops.sqrt(math.pi / (2.0 * z)) * ops.special_jv(as_float(n) + 0.5, z)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) over axis, as scipy.special.logsumexp (with b and return_sign)."""
    x = as_float(a)
    dims = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis).tolist())
    if b is None and not return_sign:
        return ops.logsumexp(x, dims, keepdims)
    w = as_float(1.0 if b is None else b)
    x, w = ops.broadcast_tensors([x, w])
    m = ops.amax(x.detach(), dims, True)
    m = ops.where(ops.isfinite(m), m, m * 0)
    s = ops.sum(w * ops.exp(x - m), dims, True)
    out = ops.log(ops.abs(s)) + m
    sign = ops.sign(s)
    if not keepdims:
        out, sign = out.reshape(*_kept(x.shape, dims)), sign.reshape(*_kept(x.shape, dims))
    return (out, sign) if return_sign else out


def _kept(shape: tuple, dims: tuple) -> tuple:
    nd = len(shape)
    drop = {d % nd for d in dims} if nd else set()
    return tuple(s for i, s in enumerate(shape) if i not in drop)


def softmax(x: Any, axis: Any = None) -> Tensor:
    """exp(x - logsumexp(x, axis))."""
    t = as_float(x)
    return ops.exp(t - logsumexp(t, axis, keepdims=True))


def log_softmax(x: Any, axis: Any = None) -> Tensor:
    """x - logsumexp(x, axis)."""
    t = as_float(x)
    return t - logsumexp(t, axis, keepdims=True)


def _pair(x: Any, y: Any) -> tuple:
    return tuple(ops.broadcast_tensors([as_float(x), as_float(y)]))


def rel_entr(x: Any, y: Any) -> Tensor:
    """x log(x / y) for x, y > 0; 0 where x == 0 and y >= 0; inf elsewhere (NaN propagates)."""
    x, y = _pair(x, y)
    pos = (x > 0) & (y > 0)
    # the other branches read safe operands, so no NaN reaches a derivative through where
    xs, ys = ops.where(pos, x, 1.0), ops.where(pos, y, 1.0)
    # at x == 0 the value is 0 and the derivative in x is log(0) = -inf, as entr's (-entr(x) carries both)
    edge = -ops.special_entr(x)
    out = ops.where(pos, xs * (ops.log(xs) - ops.log(ys)), ops.where((x == 0) & (y >= 0), edge, float("inf")))
    return ops.where(ops.isnan(x) | ops.isnan(y), x + y, out)


def kl_div(x: Any, y: Any) -> Tensor:
    """x log(x / y) - x + y for x, y > 0; y where x == 0 and y >= 0; inf elsewhere (NaN propagates)."""
    x, y = _pair(x, y)
    pos = (x > 0) & (y > 0)
    xs, ys = ops.where(pos, x, 1.0), ops.where(pos, y, 1.0)
    inner = xs * (ops.log(xs) - ops.log(ys)) - xs + ys
    out = ops.where(pos, inner, ops.where((x == 0) & (y >= 0), y - ops.special_entr(x), float("inf")))
    return ops.where(ops.isnan(x) | ops.isnan(y), x + y, out)


def huber(delta: Any, r: Any) -> Tensor:
    """r**2 / 2 where |r| <= delta, delta (|r| - delta / 2) beyond; inf for delta < 0."""
    d, r = _pair(delta, r)
    quad = r * r / 2
    lin = d * (ops.abs(r) - d / 2)
    out = ops.where(ops.abs(r) <= d, quad, lin)
    return ops.where(d < 0, float("inf"), out)


def pseudo_huber(delta: Any, r: Any) -> Tensor:
    """delta**2 (sqrt(1 + (r / delta)**2) - 1); inf for delta < 0, else 0 where delta or r is 0."""
    d, r = _pair(delta, r)
    ok = d > 0
    ds = ops.where(ok, d, 1.0)
    out = ds * ds * (ops.sqrt(1 + (r / ds) ** 2) - 1)
    out = ops.where(ok, out, float("nan"))
    return ops.where(d < 0, float("inf"), ops.where((d == 0) | (r == 0), ops.zeros_like(out), out))


def _boxcox_of_log(lg: Tensor, lmbda: Tensor) -> Tensor:
    # expm1(lmbda log) / lmbda, and near lmbda log == 0 its series log + lmbda log**2 / 2 + lmbda**2 log**3 / 6,
    # whose derivatives in lmbda are right at lmbda == 0 (the quotient's would be 0 / 0); an infinite log
    # (x == 0 or inf) takes the series (log itself) only for lmbda == 0, as SciPy's |lmbda| < 1e-19
    lg, lmbda = ops.broadcast_tensors([lg, lmbda])
    finite = ops.isfinite(lg)
    t = ops.where(finite, lmbda * lg, 0.0)
    small = ops.where(finite, ops.abs(t) < 1e-4, ops.abs(lmbda) < 1e-19)
    ls = ops.where(small, 1.0, lmbda)
    series = lg * (1 + t / 2 + t**2 / 6)
    return ops.where(small, series, ops.expm1(ls * lg) / ls)


def boxcox(x: Any, lmbda: Any) -> Tensor:
    """The Box-Cox transform (x**lmbda - 1) / lmbda, log(x) at lmbda == 0; differentiable in both."""
    return _boxcox_of_log(ops.log(as_float(x)), as_float(lmbda))


def boxcox1p(x: Any, lmbda: Any) -> Tensor:
    """The Box-Cox transform of 1 + x: ((1 + x)**lmbda - 1) / lmbda, log1p(x) at lmbda == 0."""
    return _boxcox_of_log(ops.log1p(as_float(x)), as_float(lmbda))


def cbrt(x: Any) -> Tensor:
    """The real cube root."""
    return ops.cbrt(as_float(x))


def _degrees(x: Any) -> Tensor:
    # reduced to [0, 360) first, so multiples of 90 degrees land on the same radians however large x is
    t = as_float(x)
    return (t - 360.0 * ops.floor(t / 360.0)) * (math.pi / 180)


def sindg(x: Any) -> Tensor:
    """sin of x degrees."""
    return ops.sin(_degrees(x))


def cosdg(x: Any) -> Tensor:
    """cos of x degrees."""
    return ops.cos(_degrees(x))


def _exact_at_multiples_of_45(x: Any, f, table: dict) -> Tensor:
    # f of x degrees, with SciPy's exact values at the multiples of 45 degrees in [0, 180) (tan and cot
    # have period 180): the value replaced, the derivative kept (f's, infinite at a pole)
    t = as_float(x)
    out = f(_degrees(t))
    r = t - 180.0 * ops.floor(t / 180.0)
    for at, value in table.items():
        exact = value if math.isinf(value) else out + (value - out).detach()  # (a pole's derivative: none)
        out = ops.where(r == at, exact, out)
    return out


def tandg(x: Any) -> Tensor:
    """tan of x degrees (exact at the multiples of 45 degrees, inf at 90 + 180 k)."""
    return _exact_at_multiples_of_45(x, ops.tan, {0.0: 0.0, 45.0: 1.0, 90.0: float("inf"), 135.0: -1.0})


def cotdg(x: Any) -> Tensor:
    """cot of x degrees (exact at the multiples of 45 degrees, inf at 180 k)."""
    return _exact_at_multiples_of_45(
        x, lambda r: 1 / ops.tan(r), {0.0: float("inf"), 45.0: 1.0, 90.0: 0.0, 135.0: -1.0}
    )


def radian(d: Any, m: Any, s: Any) -> Tensor:
    """An angle of d degrees, m minutes and s seconds in radians."""
    return (as_float(d) + as_float(m) / 60 + as_float(s) / 3600) * (math.pi / 180)


def cosm1(x: Any) -> Tensor:
    """cos(x) - 1 without cancellation near 0: -2 sin(x / 2)**2."""
    return -2 * ops.sin(as_float(x) / 2) ** 2


def exprel(x: Any) -> Tensor:
    """(exp(x) - 1) / x, 1 at x == 0."""
    return series_near(as_float(x), 0.0, 1e-4, lambda t: 1 + t / 2 + t**2 / 6 + t**3 / 24, lambda t: ops.expm1(t) / t)


def _inv_boxcox_exponent(y: Any, lmbda: Any) -> Tensor:
    # log1p(lmbda y) / lmbda, y at lmbda == 0; near lmbda y == 0 its series, whose derivatives in lmbda
    # are right at lmbda == 0
    y, lm = _pair(y, lmbda)
    t = lm * y
    small = ops.abs(t) < 1e-4
    ls = ops.where(small, 1.0, lm)
    return ops.where(small, y * (1 - t / 2 + t**2 / 3 - t**3 / 4), ops.log1p(ls * y) / ls)


def inv_boxcox(y: Any, lmbda: Any) -> Tensor:
    """The inverse of boxcox: (1 + lmbda y)**(1 / lmbda), exp(y) at lmbda == 0; differentiable in both."""
    return ops.exp(_inv_boxcox_exponent(y, lmbda))


def inv_boxcox1p(y: Any, lmbda: Any) -> Tensor:
    """The inverse of boxcox1p: (1 + lmbda y)**(1 / lmbda) - 1, expm1(y) at lmbda == 0."""
    return ops.expm1(_inv_boxcox_exponent(y, lmbda))


def poch(z: Any, m: Any) -> Tensor:
    """The Pochhammer symbol gamma(z + m) / gamma(z); differentiable in both."""
    z, m = _pair(z, m)
    # at a pole z = 0, -1, -2, ... with an integer m, the limit by reflection: (-1)^m gamma(1 - z) /
    # gamma(1 - z - m); with any other m, 1 / gamma(z) = 0 wins (the ratio reads safe operands there)
    pole_z = (z <= 0) & (z == ops.floor(z))
    pole = pole_z & (m == ops.floor(m))
    zs, ms = ops.where(pole_z, 1.0, z), ops.where(pole_z, 1.0, m)
    ratio = gammasgn(zs + ms) * gammasgn(zs) * ops.exp(ops.lgamma(zs + ms) - ops.lgamma(zs))
    zr, low = ops.where(pole, 1 - z, 1.0), ops.where(pole, 1 - z - m, 1.0)
    sign = ops.where(ops.remainder(m, 2) == 1, -1.0, 1.0)
    reflected = sign * gammasgn(zr) * gammasgn(low) * ops.exp(ops.lgamma(zr) - ops.lgamma(low))
    return ops.where(pole, reflected, ops.where(pole_z, 0.0, ratio))


def binom(n: Any, k: Any) -> Tensor:
    """The binomial coefficient gamma(n + 1) / (gamma(k + 1) gamma(n - k + 1)) for real n, k."""
    n, k = _pair(n, k)
    signs = gammasgn(n + 1) * gammasgn(k + 1) * gammasgn(n - k + 1)
    return signs * ops.exp(ops.lgamma(n + 1) - ops.lgamma(k + 1) - ops.lgamma(n - k + 1))


def _constants(who: str, **args: Any) -> list:
    """The arguments `who` is not differentiable in, as floating tensors (a derivative in them refused)."""
    for name, v in args.items():
        refuse_derivative(f"scipy.special.{who}", name, v)
    return [as_float(v) for v in args.values()]


def ellipkm1(p: Any) -> Tensor:
    """The complete elliptic integral of the first kind K(1 - p)."""
    return ops.special_ellipk(1 - as_float(p))


def lpmv(m: Any, v: Any, x: Any) -> Tensor:
    """The associated Legendre function P_v^m(x), integer m, real v, |x| <= 1; differentiable in x."""
    return ops.special_lpmv(*_constants("lpmv", m=m, v=v), as_float(x))


def hyp1f1(a: Any, b: Any, x: Any) -> Tensor:
    """The confluent hypergeometric function 1F1(a; b; x); differentiable in x."""
    return ops.special_hyp1f1(*_constants("hyp1f1", a=a, b=b), as_float(x))


def hyp2f1(a: Any, b: Any, c: Any, z: Any) -> Tensor:
    """The Gauss hypergeometric function 2F1(a, b; c; z) for real z < 1; differentiable in z."""
    return ops.special_hyp2f1(*_constants("hyp2f1", a=a, b=b, c=c), as_float(z))


def gammaincinv(a: Any, y: Any) -> Tensor:
    """The x with gammainc(a, x) == y; differentiable in y."""
    return ops._special_gammaincinv(*_constants("gammaincinv", a=a), as_float(y), False)


def gammainccinv(a: Any, y: Any) -> Tensor:
    """The x with gammaincc(a, x) == y; differentiable in y."""
    return ops._special_gammaincinv(*_constants("gammainccinv", a=a), as_float(y), True)


def betaincinv(a: Any, b: Any, y: Any) -> Tensor:
    """The x with betainc(a, b, x) == y; differentiable in y."""
    return ops._special_betaincinv(*_constants("betaincinv", a=a, b=b), as_float(y))


# The distribution functions below are SciPy's definitions in terms of the incomplete beta and gamma
# functions (and their inverses); each is differentiable where those are (in the probability or the
# point, not in the counts or degrees of freedom).
def bdtr(k: Any, n: Any, p: Any) -> Tensor:
    """The binomial distribution's CDF: P(X <= floor(k)) for n trials of success probability p."""
    k, n = _constants("bdtr", k=k, n=n)
    k = ops.floor(k)
    inside = (k >= 0) & (k < n)
    out = ops.special_betainc(ops.where(inside, n - k, 1.0), k + 1, 1 - as_float(p))
    return ops.where(inside, out, ops.where(k == n, 1.0, float("nan")))


def bdtrc(k: Any, n: Any, p: Any) -> Tensor:
    """The binomial distribution's survival function P(X > floor(k))."""
    k, n = _constants("bdtrc", k=k, n=n)
    k = ops.floor(k)
    inside = (k >= 0) & (k < n)
    out = ops.special_betainc(ops.where(inside, k + 1, 1.0), ops.where(inside, n - k, 1.0), as_float(p))
    edge = ops.where(k == n, 0.0, ops.where(k < 0, 1.0, float("nan")))
    return ops.where(inside, out, edge)


def bdtri(k: Any, n: Any, y: Any) -> Tensor:
    """The p with bdtr(k, n, p) == y."""
    k, n = _constants("bdtri", k=k, n=n)
    k = ops.floor(k)
    return 1 - ops._special_betaincinv(n - k, k + 1, as_float(y))


def pdtr(k: Any, m: Any) -> Tensor:
    """The Poisson distribution's CDF: P(X <= floor(k)) for mean m."""
    (k,) = _constants("pdtr", k=k)
    return ops.special_gammaincc(ops.floor(k) + 1, as_float(m))


def pdtrc(k: Any, m: Any) -> Tensor:
    """The Poisson distribution's survival function P(X > floor(k))."""
    (k,) = _constants("pdtrc", k=k)
    return ops.special_gammainc(ops.floor(k) + 1, as_float(m))


def pdtri(k: Any, y: Any) -> Tensor:
    """The mean m with pdtr(k, m) == y."""
    (k,) = _constants("pdtri", k=k)
    y = as_float(y)
    out = ops._special_gammaincinv(ops.floor(k) + 1, y, True)
    return ops.where(y < 1, out, float("nan"))


def gdtr(a: Any, b: Any, x: Any) -> Tensor:
    """The gamma distribution's CDF at x, rate a and shape b: gammainc(b, a x); differentiable in a and x."""
    (b,) = _constants("gdtr", b=b)
    return ops.special_gammainc(b, as_float(a) * as_float(x))


def gdtrc(a: Any, b: Any, x: Any) -> Tensor:
    """The gamma distribution's survival function: gammaincc(b, a x)."""
    (b,) = _constants("gdtrc", b=b)
    return ops.special_gammaincc(b, as_float(a) * as_float(x))


def nbdtr(k: Any, n: Any, p: Any) -> Tensor:
    """The negative binomial distribution's CDF: betainc(n, floor(k) + 1, p)."""
    k, n = _constants("nbdtr", k=k, n=n)
    k = ops.floor(k)
    out = ops.special_betainc(n, ops.where(k < 0, 0.0, k) + 1, as_float(p))
    return ops.where(k < 0, float("nan"), out)


def nbdtrc(k: Any, n: Any, p: Any) -> Tensor:
    """The negative binomial distribution's survival function: betainc(floor(k) + 1, n, 1 - p)."""
    k, n = _constants("nbdtrc", k=k, n=n)
    k = ops.floor(k)
    out = ops.special_betainc(ops.where(k < 0, 0.0, k) + 1, n, 1 - as_float(p))
    return ops.where(k < 0, float("nan"), out)


def nbdtri(k: Any, n: Any, y: Any) -> Tensor:
    """The p with nbdtr(k, n, p) == y."""
    k, n = _constants("nbdtri", k=k, n=n)
    return ops._special_betaincinv(n, ops.floor(k) + 1, as_float(y))


def fdtr(dfn: Any, dfd: Any, x: Any) -> Tensor:
    """The F distribution's CDF at x."""
    dfn, dfd = _constants("fdtr", dfn=dfn, dfd=dfd)
    x = as_float(x)
    top = x == float("inf")
    w = dfn * ops.where(top, 1.0, x)
    out = ops.special_betainc(dfn / 2, dfd / 2, w / (dfd + w))
    return ops.where(top, 1.0, out)


def fdtrc(dfn: Any, dfd: Any, x: Any) -> Tensor:
    """The F distribution's survival function at x."""
    dfn, dfd = _constants("fdtrc", dfn=dfn, dfd=dfd)
    return ops.special_betainc(dfd / 2, dfn / 2, dfd / (dfd + dfn * as_float(x)))


def fdtri(dfn: Any, dfd: Any, p: Any) -> Tensor:
    """The x with fdtr(dfn, dfd, x) == p."""
    dfn, dfd = _constants("fdtri", dfn=dfn, dfd=dfd)
    w = ops._special_betaincinv(dfn / 2, dfd / 2, as_float(p))
    return dfd * w / (dfn * (1 - w))


def chdtri(v: Any, p: Any) -> Tensor:
    """The x with chdtrc(v, x) == p (the chi-square survival function's inverse)."""
    (v,) = _constants("chdtri", v=v)
    return 2 * ops._special_gammaincinv(v / 2, as_float(p), True)


# the public names of pushforward.scipy.special
NAMES = __all__ = public_functions(globals())

# the functions _unary and _of_order make are named after their first public name (tracebacks, the
# API reference, the error naming the function)
for _n in NAMES:
    _f = globals()[_n]
    if "<locals>" in _f.__qualname__:
        _f.__name__ = _f.__qualname__ = _n
        _f.__doc__ = _f.__doc__ or f"scipy.special.{_n} on tensors, differentiable in both modes."

# scipy.special ufunc -> the function computing it on tensors (the NEP-13 dispatch's table)
SCIPY_UFUNCS: dict = {getattr(_sp, n): globals()[n] for n in NAMES if isinstance(getattr(_sp, n, None), np.ufunc)}
