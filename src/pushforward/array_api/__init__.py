"""pushforward.array_api: a namespace conforming to the Python Array API standard (2024.12),
with its linalg and fft extensions. Every function is one of pushforward's differentiable ops or
a composite of them, so tangents, the tape, vmap, compile, jet and lazy tensors flow through code
written against the standard (SciPy's with SCIPY_ARRAY_API=1: docs/array-api.md).
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

from . import fft, linalg, special
from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._dtypes import (
    astype,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._elementwise import (
    bitwise_left_shift,
    bitwise_right_shift,
    clip,
    elementwise_functions as _elementwise_functions,
    floor_divide,
    isinf,
    logical_xor,
    nextafter,
    positive,
    sign,
    signbit,
)
from ._info import __array_namespace_info__
from ._linear import matmul, matrix_transpose, tensordot, vecdot
from ._manipulation import (
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    take,
    take_along_axis,
    tile,
    unstack,
)
from ._searching import (
    argmax,
    argmin,
    argsort,
    count_nonzero,
    nonzero,
    searchsorted,
    sort,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    where,
)
from ._statistical import all, any, cumulative_prod, cumulative_sum, diff, max, mean, min, prod, std, sum, var
from ..core.namespace import public_dir as _public_dir
from ..core.tensor import Tensor as _Tensor

globals().update(_elementwise_functions())

__array_api_version__ = "2024.12"
e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _namespace_for(api_version: str | None) -> object:
    """This module, for api_version None or one of the standard's versions it covers."""
    if api_version is not None and api_version not in _VERSIONS:
        raise ValueError(
            f"__array_namespace__(): unsupported Array API version {api_version!r}; supported: {_VERSIONS}"
        )
    return _sys.modules[__name__]


__all__ = sorted(n for n, v in globals().items() if not n.startswith("_") and not isinstance(v, type(_math))) + [
    "fft",
    "linalg",
    "special",
    "__array_namespace_info__",
]
__dir__ = _public_dir(globals(), frozenset({"fft", "linalg", "special"}))
