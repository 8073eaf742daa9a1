"""scipy.stats.beta on tensors: pdf, logpdf (differentiable in x, a, b), cdf (in x).

>>> import pushforward as pf
>>> float(cdf(pf.tensor(0.5), 2.0, 2.0))
0.5
"""

from __future__ import annotations

from typing import Any

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float, off_support, refuse_derivative, standard

__all__ = ["pdf", "logpdf", "cdf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """log of the beta density (-inf outside [0, 1])."""
    a, b, y = as_float(a), as_float(b), standard(x, loc, scale)
    val = ops.xlogy(a - 1, y) + ops.special_xlog1py(b - 1, -y) - ops.special_betaln(a, b) - ops.log(as_float(scale))
    return off_support(ops.logical_or(ops.lt(y, 0), ops.gt(y, 1)), val)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The beta density."""
    return ops.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The beta distribution function I_x(a, b)."""
    refuse_derivative("scipy.stats.beta.cdf", "a", a)
    refuse_derivative("scipy.stats.beta.cdf", "b", b)
    return ops.special_betainc(as_float(a), as_float(b), ops.clamp(standard(x, loc, scale), 0.0, 1.0))
