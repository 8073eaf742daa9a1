"""Small helpers shared by the composite modules of issue 13 (shape_composites, sort_composites,
scatter_formulas, nn_conv, nn_composites): the generated ops module (imported late: it imports
formulas.py, which imports the composites), constant tensors from arrays, and dim checks.
"""
from __future__ import annotations

import numpy as np

from .errors import OpError


def ops():
    """The generated ops module."""
    from ._generated import ops as generated
    return generated


def const(arr, dtype=None):
    """A constant (non-differentiable) tensor holding a copy of `arr` (index arrays, masks, weights)."""
    from .creation import as_tensor
    return as_tensor(np.array(arr, dtype=dtype))


def check_dim(d, ndim: int, name: str) -> int:
    """torch's dim d (may be negative) for a tensor of ndim dims (0-d counts as 1), or a clear error."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise OpError(f"{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n
