"""Small helpers shared by the formula and composite modules (formulas, formulas_linalg,
shape_composites, sort_composites, scatter_formulas, nn_conv, nn_composites): the generated ops
(reached through the registry: the generated module imports formulas.py, which imports the
composites), constant tensors from arrays, scaling, and dim checks.

>>> const([1, 2]).dtype
dtype('int64')
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .autograd.registry import OPS, Registry
from .creation import as_tensor
from .errors import check_dim  # (lives in core: the kernels use it too)
from ._tensor import Tensor

__all__ = ["ops", "const", "scale", "check_dim"]


def ops() -> Registry:
    """The generated ops (the registry `pushforward.methods` fills with the generated module's names)."""
    return OPS


def const(arr: Any, dtype: Any = None) -> Tensor:
    """A constant (non-differentiable) tensor holding a copy of `arr` (index arrays, masks, weights)."""
    return as_tensor(np.array(arr, dtype=dtype))


def scale(t: Any, alpha: Any) -> Any:
    """t * alpha, skipping the multiply when alpha is 1."""
    return t if alpha == 1 else t * alpha
