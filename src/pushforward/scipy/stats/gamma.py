"""scipy.stats.gamma on tensors: pdf, logpdf (differentiable in x, a, loc, scale), cdf (in x, loc, scale).

>>> import pushforward as pf
>>> round(float(cdf(pf.tensor(1.0), 1.0)), 6)
0.632121
"""

from __future__ import annotations

import math
from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, refuse_derivative

__all__ = ["pdf", "logpdf", "cdf"]


def logpdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the gamma density (-inf for x < loc)."""
    a, s = as_float(a), as_float(scale)
    y = (as_float(x) - as_float(loc)) / s
    val = ops.xlogy(a - 1, y) - y - ops.lgamma(a) - ops.log(s)
    return ops.where(ops.lt(y, 0), val * 0 - math.inf, val)


def pdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The gamma density."""
    return ops.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The gamma distribution function P(a, (x - loc) / scale)."""
    refuse_derivative("scipy.stats.gamma.cdf", "a", a)
    y = (as_float(x) - as_float(loc)) / as_float(scale)
    return ops.special_gammainc(as_float(a), ops.clamp(y, 0.0, None))
