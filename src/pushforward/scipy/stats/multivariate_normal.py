"""scipy.stats.multivariate_normal on tensors: pdf, logpdf (differentiable in x, mean and cov;
allow_singular uses the pseudo-determinant and pseudo-inverse, as SciPy), entropy.

>>> import pushforward as pf
>>> round(float(logpdf(pf.zeros(2), pf.zeros(2), pf.eye(2))), 6)
-1.837877
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core import creation
from ...core.tensor import Tensor
from ...ops import generated as ops
from ... import linalg
from .._common import as_float, off_support

__all__ = ["pdf", "logpdf", "entropy"]


def _cov(cov: Any, d: int) -> Tensor:
    c = as_float(cov)
    if c.ndim == 0:
        return c * creation.eye(d, dtype=c.dtype)
    if c.ndim == 1:
        return ops.diag(c)
    return c


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """log of the multivariate normal density; x's last axis holds the components."""
    x = as_float(x)
    d = x.shape[-1] if x.ndim else 1
    dev = x - (0.0 if mean is None else as_float(mean))
    c = _cov(cov, d)
    if not allow_singular:
        chol = linalg.cholesky(c)
        z = linalg.solve_triangular(chol, dev.reshape(-1, d).T, upper=False)
        maha = ops.sum(z * z, 0).reshape(*dev.shape[:-1])
        logdet = 2.0 * ops.sum(ops.log(ops.diagonal(chol, 0, -2, -1)))
        return -0.5 * (d * math.log(2 * math.pi) + logdet + maha)
    s, u = linalg.eigh(c)
    vals = s.detach().numpy()
    keep = vals > 1e6 * np.finfo(np.float64).eps * np.max(np.abs(vals))
    mask = creation.tensor(keep.astype(np.float64))
    safe = ops.where(creation.tensor(keep), s, s * 0 + 1.0)
    proj = ops.matmul(dev, u)
    maha = ops.sum(proj * proj * mask / safe, -1)
    logdet = ops.sum(ops.log(safe) * mask)
    # a deviation outside the covariance's range has density zero, as SciPy
    outside = ops.gt(ops.sum(proj * proj * (1 - mask), -1), 1e-12)
    val = -0.5 * (int(keep.sum()) * math.log(2 * math.pi) + logdet + maha)
    return off_support(outside, val)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """The multivariate normal density."""
    return ops.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1) -> Tensor:
    """The differential entropy 0.5 log det(2 pi e cov)."""
    d = as_float(mean).shape[-1] if mean is not None else (as_float(cov).shape[-1] if as_float(cov).ndim else 1)
    c = _cov(cov, d)
    return 0.5 * (d * (1.0 + math.log(2 * math.pi)) + linalg.slogdet(c)[1])
