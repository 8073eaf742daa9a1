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


# torch.special's names of the ops: their `special.<name>` aliases in derivatives.yaml
globals().update(ops.NAMESPACES["special"])
__all__ = sorted(ops.NAMESPACES["special"])


__dir__ = _public_dir(globals())
