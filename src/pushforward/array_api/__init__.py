"""pushforward.array_api: a namespace conforming to the Python Array API standard (2024.12),
with its linalg and fft extensions, as a strict view of pushforward.numpy: NumPy 2 took the
standard's names and semantics (NEP 56), so each function the standard shares with NumPy is
pushforward.numpy's, and this package holds only where the standard differs (its dtype rules,
copy semantics, special cases, `descending`, the inspection object; docs/array-api.md lists them).
Every function runs pushforward's differentiable ops, so tangents, the tape, vmap, compile, jet and
lazy tensors flow through code written against the standard (SciPy's with SCIPY_ARRAY_API=1).
`Tensor.__array_namespace__()` returns it.

>>> import pushforward as pf
>>> import pushforward.array_api as xp
>>> x = xp.asarray([1.0, 2.0, 3.0])
>>> x.__array_namespace__() is xp
True
>>> xp.max(xp.stack([x, 2 * x]), axis=0, keepdims=True)
tensor([[2., 4., 6.]])
>>> pf.func.grad(lambda t: xp.sum(xp.exp(t)))(xp.zeros(2))
tensor([1., 1.])
"""

import math as _math
import sys as _sys

from . import _creation, _dtypes, _elementwise, _functions, fft, linalg, special
from ._info import __array_namespace_info__
from ..core.namespace import public_dir as _public_dir

_PARTS = (_creation, _dtypes, _elementwise, _functions)
globals().update({_n: getattr(_m, _n) for _m in _PARTS for _n in _m.__all__})

__array_api_version__ = "2024.12"
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _namespace_for(api_version: str | None) -> object:
    """This module, for api_version None or one of the standard's versions it covers."""
    if api_version is not None and api_version not in _VERSIONS:
        raise ValueError(
            f"__array_namespace__(): unsupported Array API version {api_version!r}; supported: {_VERSIONS}"
        )
    return _sys.modules[__name__]


__all__ = sorted(_n for _m in _PARTS for _n in _m.__all__)
__all__ += ["e", "inf", "nan", "pi", "newaxis", "fft", "linalg", "special", "__array_namespace_info__"]
__dir__ = _public_dir(globals(), frozenset({"fft", "linalg", "special"}))
