"""`jet`: Taylor mode, all derivatives up to order K along a curve in one pass (JAX's signature).

The input curve is x(t) = x0 + sum_k series[k] t^(k+1) / (k+1)! (the derivative convention:
series[k] is the (k+1)-th derivative of x(t) at 0) and the result's series_out[k] is the
(k+1)-th derivative of f(x(t)) at t = 0. Inside, the coefficients are normalised (x_k = x^(k) / k!,
no factorials), so high orders do not overflow; the conversion scales each order once.

>>> import pushforward as pf
>>> y, (d1, d2, d3) = jet(pf.exp, (pf.tensor(0.0),), ([pf.tensor(1.0), pf.tensor(0.0), pf.tensor(0.0)],))
>>> float(y), float(d1), float(d2), float(d3)
(1.0, 1.0, 1.0, 1.0)
"""

from __future__ import annotations

import math

import numpy as np
from typing import Any, Callable, Sequence

from ..core.creation import as_tensor, ones_like, zeros, zeros_like
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tensor import Tensor
from ..errors import NestingError, OpTypeError, OpValueError
from .transforms import jvp
from .series import Series, SeriesTag

__all__ = ["jet", "jet_by_rules"]

# k! is finite in float64 up to k = 170: the largest order whose derivatives can be given back
MAX_ORDER = 170


def jet(f: Callable, primals: Sequence, series: Sequence) -> tuple[Any, Any]:
    """(f(x0), [d^k/dt^k f(x(t)) at 0 for k = 1..K]) for x(t) = x0 + sum_k series[k] t^(k+1)/(k+1)!.

    `primals` is a tuple of tensors, `series` a tuple (one per primal) of lists of K tensors of the
    primal's shape. f may return a tensor or a pytree (tuple, list, dict) of tensors; `series_out`
    has the same structure with a list of K tensors in place of each tensor.

    >>> import pushforward as pf
    >>> x, v = pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.0])
    >>> y, (d1, d2) = jet(lambda x: (x ** 3).sum(), (x,), ([v, pf.zeros(2)],))
    >>> float(y), float(d1), float(d2)
    (9.0, 3.0, 6.0)
    """
    primals, series = _checked(primals, series)
    K = len(series[0]) if series else 0
    try:
        return _by_rules(f, primals, series, K)
    except NotImplementedError as e:
        if not (isinstance(e, NestingError) or str(e).startswith("jet:")):
            raise
    # an op without a Taylor rule, or a transform inside f that cannot see series (docs/taylor.md,
    # "Beyond the rules"): the same derivatives by nested dual levels
    return _by_nested_levels(f, primals, series, K)


def jet_by_rules(f: Callable, primals: Sequence, series: Sequence) -> tuple[Any, Any]:
    """jet by the Taylor rules alone: raises (``NestingError``, ``NotImplementedError("jet: ...")``)
    where :func:`jet` falls back to nested dual levels; for checking the rules.

    >>> import pushforward as pf
    >>> jet_by_rules(pf.sin, (pf.tensor(0.0),), ([pf.tensor(1.0)],))
    (tensor(0.), [tensor(1.)])
    """
    primals, series = _checked(primals, series)
    return _by_rules(f, primals, series, len(series[0]) if series else 0)


def _by_rules(f: Callable, primals: list, series: list, K: int) -> tuple[Any, Any]:
    """jet by Taylor rules: f once on series tensors."""
    tag = SeriesTag()
    xs = [_curve(i, p, s, tag) for i, (p, s) in enumerate(zip(primals, series))]
    out = f(*xs)
    leaves, spec = tree_flatten(out)
    prims, terms = [], []
    for leaf in leaves:
        c = _output_coefficients(leaf, K, tag)
        prims.append(c[0])
        terms.append([c[k] * _factorial(k) for k in range(1, K + 1)])
    return tree_unflatten(prims, spec), tree_unflatten(terms, spec)


def _by_nested_levels(f: Callable, primals: list, series: list, K: int) -> tuple[Any, Any]:
    """jet by K nested dual levels: the k-th derivative of g(t) = f(x(t)) at 0 is k nested jvps of g
    along t (forward-over-forward, which every transform inside f composes with); 2^k runs of f's ops
    for order k instead of k^2, so only where the Taylor rules cannot run."""

    def g(t: Tensor) -> Any:
        xs = []
        for p, terms in zip(primals, series):
            x = p
            for k, term in enumerate(terms, start=1):
                x = x + _tensor(term, "series") * ((t**k) * (1.0 / _factorial(k)))
            xs.append(x)
        return f(*xs)

    derivatives = [g]
    for _ in range(K):
        derivatives.append(lambda t, d=derivatives[-1]: jvp(d, (t,), (ones_like(t),))[1])
    # (the curve's parameter is real, in the primals' precision)
    t0 = zeros((), dtype=np.empty(0, primals[0].dtype).real.dtype if primals else np.float64)
    out = f(*primals)
    leaves, spec = tree_flatten(out)
    per_order = [tree_flatten(d(t0))[0] for d in derivatives[1:]]
    terms = [[per_order[k][i] for k in range(K)] for i in range(len(leaves))]
    return out, tree_unflatten(terms, spec)


def _checked(primals, series) -> tuple[list, list]:
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise OpTypeError(
            f"jet: primals and series must be tuples (one entry per argument of f), got "
            f"{type(primals).__name__} and {type(series).__name__}"
        )
    if len(primals) != len(series):
        raise OpValueError(f"jet: {len(primals)} primals but {len(series)} series (one list of terms per primal)")
    series = [list(s) if isinstance(s, (tuple, list)) else s for s in series]
    for i, s in enumerate(series):
        if not isinstance(s, list):
            raise OpTypeError(f"jet: series[{i}] must be a list of tensors (the terms), got {type(s).__name__}")
    orders = {len(s) for s in series}
    if len(orders) > 1:
        raise OpValueError(f"jet: every primal needs the same number of terms, got {[len(s) for s in series]}")
    if orders and max(orders) > MAX_ORDER:
        raise OpValueError(f"jet: order {max(orders)} is above {MAX_ORDER} (k! overflows float64 beyond it)")
    return [_tensor(p, f"primals[{i}]") for i, p in enumerate(primals)], series


def _tensor(v, what: str) -> Tensor:
    if isinstance(v, Series):
        raise NotImplementedError(
            f"jet: {what} is a Taylor series of an enclosing jet; nested jets are not supported yet"
        )
    t = v if isinstance(v, Tensor) else as_tensor(v)
    if t.dtype.kind not in "fc":
        raise OpTypeError(f"jet: {what} has dtype {t.dtype}; a Taylor series needs a floating or complex tensor")
    return t


def _curve(i: int, p: Tensor, terms: list, tag: SeriesTag):
    """The series of x(t) with normalised coefficients x_k = series[k-1] / k! (p itself when K = 0)."""
    coeffs = [p]
    for k, term in enumerate(terms, start=1):
        t = _tensor(term, f"series[{i}][{k - 1}]")
        if tuple(t.shape) != tuple(p.shape) or t.dtype != p.dtype:
            raise OpValueError(
                f"jet: series[{i}][{k - 1}] has shape {tuple(t.shape)} and dtype {t.dtype}, but primals[{i}] has "
                f"shape {tuple(p.shape)} and dtype {p.dtype} (each term must match its primal)"
            )
        coeffs.append(t * (1.0 / _factorial(k)))  # (a new tensor at k = 1 too: f may write x in place)
    return Series(coeffs, tag) if terms else p


def _factorial(k: int) -> float:
    return float(math.factorial(k))


def _output_coefficients(leaf, K: int, tag: SeriesTag) -> list:
    if type(leaf) is Series:
        if leaf._tag is not tag:
            raise NotImplementedError(
                "jet: f returned a Taylor series of another jet call; nested jets are not supported"
            )
        return leaf._c
    if not isinstance(leaf, Tensor):
        raise OpTypeError(f"jet: f must return tensors (or tuples, lists, dicts of them), got {type(leaf).__name__}")
    return [leaf] + [zeros_like(leaf) for _ in range(K)]  # f(x(t)) does not depend on t
