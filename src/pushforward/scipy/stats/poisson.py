"""scipy.stats.poisson on tensors: pmf, logpmf, cdf (differentiable in mu; k is a count).

>>> import pushforward as pf
>>> round(float(pmf(0, pf.tensor(1.0))), 6)
0.367879
"""

from __future__ import annotations

from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, off_support, refuse_derivative

__all__ = ["pmf", "logpmf", "cdf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """log of the Poisson probability of k (-inf off the non-negative integers)."""
    refuse_derivative("scipy.stats.poisson.logpmf", "k", k)
    kk, m = as_float(k) - as_float(loc), as_float(mu)
    bad = ops.logical_or(ops.lt(kk, 0), ops.ne(kk, ops.floor(kk)))
    return off_support(bad, ops.xlogy(kk, m) - m - ops.lgamma(kk + 1))


def pmf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """The Poisson probability of k."""
    return ops.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """The Poisson distribution function Q(floor(k) + 1, mu)."""
    refuse_derivative("scipy.stats.poisson.cdf", "k", k)
    kk, m = ops.floor(as_float(k) - as_float(loc)), as_float(mu)
    val = ops.special_gammaincc(ops.clamp(kk, 0.0, None) + 1, m)
    return ops.where(ops.lt(kk, 0), val * 0, val)
