"""Special functions under SciPy's names, over pushforward.special's differentiable ops. Not part
of the standard: SciPy (SCIPY_ARRAY_API=1) looks for `xp.special.<name>` before falling back to
NumPy, so with this module `scipy.special.erf(x)` and its kin run as our ops and keep derivatives.

>>> import pushforward.array_api as xp
>>> xp.special.expit(xp.asarray([0.0]))
tensor([0.5])
"""

from __future__ import annotations

from .. import special as _sp
from ..core.namespace import public_dir as _public_dir

__all__ = [
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log_ndtr",
    "logit",
    "ndtr",
    "ndtri",
    "psi",
    "xlog1py",
    "xlogy",
]

entr = _sp.entr
erf = _sp.erf
erfc = _sp.erfc
erfinv = _sp.erfinv
expit = _sp.expit
gammainc = _sp.gammainc
gammaincc = _sp.gammaincc
gammaln = _sp.gammaln
i0 = _sp.i0
i0e = _sp.i0e
i1 = _sp.i1
i1e = _sp.i1e
log_ndtr = _sp.log_ndtr
logit = _sp.logit
ndtr = _sp.ndtr
ndtri = _sp.ndtri
psi = _sp.digamma
xlog1py = _sp.xlog1py
xlogy = _sp.xlogy


__dir__ = _public_dir(globals())
