"""Special functions under SciPy's names and signatures: pushforward.scipy.special's functions.
Not part of the standard: SciPy (SCIPY_ARRAY_API=1) looks for `xp.special.<name>` before falling
back to NumPy, so with this module `scipy.special.erf(x)`, `gamma`, `betainc`, `polygamma` and
their kin run as our ops and keep derivatives (and SciPy's own array-API versions of `stdtr`,
`chdtr`, `betaincc` build on them).

>>> import pushforward.array_api as xp
>>> xp.special.expit(xp.asarray([0.0]))
tensor([0.5])
"""

from __future__ import annotations

from ..core.namespace import public_dir as _public_dir
from ..scipy import special as _impl

globals().update({_n: getattr(_impl, _n) for _n in _impl.__all__})

__all__ = list(_impl.__all__)

__dir__ = _public_dir(globals())
