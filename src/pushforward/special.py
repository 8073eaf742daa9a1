"""pushforward.special: torch.special's functions, differentiable in both modes.

New ops (Bessel i0/i0e/i1/i1e, j0/j1/y0/y1, k0/k1 (and scaled), spherical j0, Airy Ai,
incomplete gamma (differentiable in x), ndtr, ndtri, log_ndtr, erfcx, xlog1py, sinc, entr, zeta,
multigammaln, betaln) and the torch.special names of existing ops (expit = sigmoid,
gammaln = lgamma, psi = digamma, ...). `zeta(x, q)` is differentiable in q only (as in
torch). digamma/polygamma accept complex input (a complex Hurwitz zeta kernel).

>>> import pushforward as pf
>>> float(pf.special.ndtr(pf.tensor(0.0)))
0.5
"""

from __future__ import annotations

from .ops import generated as ops
from .core.namespace import public_dir as _public_dir

__all__ = [
    "i0",
    "i0e",
    "i1",
    "i1e",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "erfcx",
    "xlog1py",
    "xlogy",
    "sinc",
    "entr",
    "zeta",
    "multigammaln",
    "gammaln",
    "betaln",
    "expit",
    "logit",
    "softmax",
    "log_softmax",
    "digamma",
    "psi",
    "polygamma",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expm1",
    "log1p",
    "logsumexp",
    "round",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
    "airy_ai",
    "gammainc",
    "gammaincc",
]

i0 = ops.special_i0
i0e = ops.special_i0e
i1 = ops.special_i1
i1e = ops.special_i1e
ndtr = ops.special_ndtr
ndtri = ops.special_ndtri
log_ndtr = ops.special_log_ndtr
erfcx = ops.special_erfcx
xlog1py = ops.special_xlog1py
xlogy = ops.xlogy
sinc = ops.sinc
entr = ops.special_entr
zeta = ops.special_zeta
multigammaln = ops.mvlgamma
gammaln = ops.lgamma
betaln = ops.special_betaln
expit = ops.sigmoid
logit = ops.logit
softmax = ops.softmax
log_softmax = ops.log_softmax
digamma = ops.digamma
psi = ops.digamma
polygamma = ops.polygamma
erf = ops.erf
erfc = ops.erfc
erfinv = ops.erfinv
exp2 = ops.exp2
expm1 = ops.expm1
log1p = ops.log1p
logsumexp = ops.logsumexp
round = ops.round  # noqa: A001 - torch's name
bessel_j0 = ops.special_bessel_j0
bessel_j1 = ops.special_bessel_j1
bessel_y0 = ops.special_bessel_y0
bessel_y1 = ops.special_bessel_y1
modified_bessel_i0 = ops.special_i0
modified_bessel_i1 = ops.special_i1
modified_bessel_k0 = ops.special_modified_bessel_k0
modified_bessel_k1 = ops.special_modified_bessel_k1
scaled_modified_bessel_k0 = ops.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = ops.special_scaled_modified_bessel_k1
spherical_bessel_j0 = ops.special_spherical_bessel_j0
airy_ai = ops.special_airy_ai
gammainc = ops.special_gammainc
gammaincc = ops.special_gammaincc


__dir__ = _public_dir(globals())
