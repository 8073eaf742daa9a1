"""pushforward.scipy.stats: SciPy's distributions on tensors (norm, t, chi2, beta, gamma, poisson,
dirichlet, multivariate_normal), with SciPy's function names and arguments.

>>> import pushforward as pf
>>> from pushforward.scipy import stats
>>> float(stats.norm.cdf(pf.tensor(0.0)))
0.5
"""

from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
