"""The faces' database, SciPy part beyond opdb_faces.py's first entries: the special functions
and distribution functions those do not call.

>>> sorted(MORE_SCIPY_FACES)[:2]
['beta_pdf', 'chi2_pdf']
"""

from __future__ import annotations

import numpy as np

from .faceinfo import M34, P4, V3, V4, Face

__all__ = ["MORE_SCIPY_FACES"]

_POS = np.array([0.4, 1.1, 2.3, 3.7])
_X = np.array([0.15, 0.35, 0.6, 0.85])

MORE_SCIPY_FACES: dict[str, Face] = {
    **{n: Face(lambda sp, x, n=n: getattr(sp.special, n)(x), (V4,)) for n in ("exp10", "exp2", "expm1", "sinc")},
    "log1p": Face(lambda sp, x: sp.special.log1p(x), (_X,)),
    "log_expit": Face(lambda sp, x: sp.special.log_expit(x), (V4,)),
    "loggamma": Face(lambda sp, x: sp.special.loggamma(x), (_POS,)),
    "gammasgn": Face(lambda sp, x: sp.special.gammasgn(x), (np.array([-1.5, -0.5, 0.5, 2.5]),), diff=False),
    "k0e": Face(lambda sp, x: sp.special.k0e(x), (_POS,)),
    "k1e": Face(lambda sp, x: sp.special.k1e(x), (_POS,)),
    "log_softmax": Face(lambda sp, x: sp.special.log_softmax(x, axis=1), (M34,)),
    "spherical_jn": Face(lambda sp, x: sp.special.spherical_jn(2, x), (_POS,)),
    "yv": Face(lambda sp, x: sp.special.yv(1.5, x), (_POS,)),
    # (the derivative in x has no closed form here: refused, naming x; in q it is -x zeta(x + 1, q))
    "zeta": Face(lambda sp, q: sp.special.zeta(3.0, q), (_POS + 1.2,)),
    "norm_ppf": Face(lambda sp, q: sp.stats.norm.ppf(q, 0.5, 2.0), (_X,)),
    "norm_pdf_loc": Face(lambda sp, x, m, s: sp.stats.norm.pdf(x, m, s), (V4, V4[::-1], P4), (0, 1, 2)),
    "t_pdf": Face(lambda sp, x: sp.stats.t.pdf(x, 3.5), (V4,)),
    "chi2_pdf": Face(lambda sp, x: sp.stats.chi2.pdf(x, 3.0), (_POS,)),
    "beta_pdf": Face(lambda sp, x: sp.stats.beta.pdf(x, 2.0, 3.0), (_X,)),
    "gamma_pdf": Face(lambda sp, x: sp.stats.gamma.pdf(x, 2.0), (_POS,)),
    "poisson_pmf": Face(lambda sp, mu: sp.stats.poisson.pmf(np.array([0.0, 1, 3, 2]), mu), (_POS,)),
    "dirichlet_pdf": Face(lambda sp, a: sp.stats.dirichlet.pdf(np.array([0.2, 0.3, 0.5]), a), (_POS[1:],)),
    "dirichlet_rvs": Face(
        lambda sp, a: sp.stats.dirichlet.rvs(a, size=2, random_state=0), (_POS[:3],), diff=False, plain=True
    ),
    "mvn_pdf": Face(lambda sp, x, m: sp.stats.multivariate_normal.pdf(x, m, np.eye(3)), (V3, V3[::-1]), (0, 1)),
}
