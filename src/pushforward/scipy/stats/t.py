"""scipy.stats.t on tensors: pdf, logpdf (differentiable in x, df, loc, scale), cdf, logcdf
(differentiable in x, loc and scale; df raises).

>>> import pushforward as pf
>>> float(cdf(pf.tensor(0.0), 3.0))
0.5
"""

from __future__ import annotations

import math
from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, refuse_derivative, standard

__all__ = ["pdf", "logpdf", "cdf", "logcdf"]


def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of Student's t density."""
    nu, z = as_float(df), standard(x, loc, scale)
    norm = ops.lgamma((nu + 1) / 2) - ops.lgamma(nu / 2) - 0.5 * ops.log(nu * math.pi) - ops.log(as_float(scale))
    return norm - (nu + 1) / 2 * ops.log1p(z * z / nu)


def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Student's t density."""
    return ops.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Student's t distribution function: I_{df/(df+z^2)}(df/2, 1/2) / 2 in the left tail."""
    refuse_derivative("scipy.stats.t.cdf", "df", df)
    nu, z = as_float(df), standard(x, loc, scale)
    tail = 0.5 * ops.special_betainc(nu / 2, nu * 0 + 0.5, nu / (nu + z * z))
    return ops.where(ops.gt(z, 0), 1.0 - tail, tail)


def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of Student's t distribution function."""
    return ops.log(cdf(x, df, loc, scale))
