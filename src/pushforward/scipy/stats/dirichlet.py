"""scipy.stats.dirichlet on tensors: pdf, logpdf (differentiable in x and alpha); rvs is SciPy's.
As SciPy, x's first axis holds the components.

>>> import pushforward as pf
>>> round(float(pdf(pf.tensor([0.5, 0.5]), pf.tensor([1.0, 1.0]))), 6)
1.0
"""

from __future__ import annotations

from typing import Any

import scipy.stats as _st

from ...core.tensor import Tensor
from ...ops import generated as ops
from .._common import as_float

__all__ = ["pdf", "logpdf", "rvs"]


def logpdf(x: Any, alpha: Any) -> Tensor:
    """log of the Dirichlet density."""
    x, alpha = as_float(x), as_float(alpha)
    log_b = ops.sum(ops.lgamma(alpha)) - ops.lgamma(ops.sum(alpha))
    return ops.sum(ops.xlogy(alpha - 1, x.T).T, 0) - log_b


def pdf(x: Any, alpha: Any) -> Tensor:
    """The Dirichlet density."""
    return ops.exp(logpdf(x, alpha))


def rvs(alpha: Any, size: Any = 1, random_state: Any = None) -> Any:
    """Random draws (SciPy's: constants)."""
    a = alpha.detach().numpy() if isinstance(alpha, Tensor) else alpha
    return _st.dirichlet.rvs(a, size=size, random_state=random_state)
