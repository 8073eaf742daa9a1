"""scipy.stats.chi2 on tensors: pdf, logpdf (differentiable in x and df), cdf (in x).

>>> import pushforward as pf
>>> round(float(cdf(pf.tensor(2.0), 2)), 6)
0.632121
"""

from __future__ import annotations

import math
from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, refuse_derivative

__all__ = ["pdf", "logpdf", "cdf"]


def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the chi-squared density (-inf for x < 0)."""
    k, s = as_float(df), as_float(scale)
    y = (as_float(x) - as_float(loc)) / s
    val = ops.xlogy(k / 2 - 1, y) - y / 2 - k / 2 * math.log(2.0) - ops.lgamma(k / 2) - ops.log(s)
    return ops.where(ops.lt(y, 0), val * 0 - math.inf, val)


def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The chi-squared density."""
    return ops.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The chi-squared distribution function P(df/2, x/2)."""
    refuse_derivative("scipy.stats.chi2.cdf", "df", df)
    y = (as_float(x) - as_float(loc)) / as_float(scale)
    return ops.special_gammainc(as_float(df) / 2, ops.clamp(y, 0.0, None) / 2)
