"""scipy.stats.norm on tensors: pdf, logpdf, cdf, logcdf, sf, logsf, ppf (differentiable in x, loc, scale).

>>> import pushforward as pf
>>> float(cdf(pf.tensor(0.0)))
0.5
"""

from __future__ import annotations

import math
from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, standard

__all__ = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the normal density."""
    z = standard(x, loc, scale)
    return -0.5 * z * z - ops.log(as_float(scale)) - _HALF_LOG_2PI


def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The normal density."""
    return ops.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The normal distribution function."""
    return ops.special_ndtr(standard(x, loc, scale))


def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log cdf, accurate in the left tail."""
    return ops.special_log_ndtr(standard(x, loc, scale))


def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The survival function 1 - cdf."""
    return ops.special_ndtr(-standard(x, loc, scale))


def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log sf, accurate in the right tail."""
    return ops.special_log_ndtr(-standard(x, loc, scale))


def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The quantile function (inverse cdf)."""
    return as_float(loc) + as_float(scale) * ops.special_ndtri(as_float(q))
