"""scipy.stats.chi2 on tensors: pdf, logpdf (differentiable in x and df), cdf (in x).

>>> import pushforward as pf
>>> round(float(cdf(pf.tensor(2.0), 2)), 6)
0.632121
"""

from __future__ import annotations

from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, refuse_derivative
from . import gamma

__all__ = ["pdf", "logpdf", "cdf"]

# chi2(df) is the gamma distribution of shape df / 2 and scale 2: one rule for both


def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the chi-squared density (-inf for x < 0)."""
    return gamma.logpdf(x, as_float(df) / 2, loc, 2 * as_float(scale))


def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The chi-squared density."""
    return ops.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The chi-squared distribution function P(df/2, x/2)."""
    refuse_derivative("scipy.stats.chi2.cdf", "df", df)
    return gamma.cdf(x, as_float(df).detach() / 2, loc, 2 * as_float(scale))
