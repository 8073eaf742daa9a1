"""scipy.stats.gamma on tensors: pdf, logpdf (differentiable in x, a, loc, scale), cdf (in x, loc, scale).

>>> import pushforward as pf
>>> round(float(cdf(pf.tensor(1.0), 1.0)), 6)
0.632121
"""

from __future__ import annotations

from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, off_support, refuse_derivative, standard

__all__ = ["pdf", "logpdf", "cdf"]


def logpdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the gamma density (-inf for x < loc)."""
    a, y = as_float(a), standard(x, loc, scale)
    return off_support(ops.lt(y, 0), ops.xlogy(a - 1, y) - y - ops.lgamma(a) - ops.log(as_float(scale)))


def pdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The gamma density."""
    return ops.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The gamma distribution function P(a, (x - loc) / scale)."""
    refuse_derivative("scipy.stats.gamma.cdf", "a", a)
    return ops.special_gammainc(as_float(a), ops.clamp(standard(x, loc, scale), 0.0, None))
