"""Small helpers shared by the formula and composite modules (`ops/formulas/`,
`ops/composites/`): the generated ops
(reached through the registry: the generated module imports ops/formulas/common.py, which imports the
composites), constant tensors from arrays, scaling, and dim checks.

>>> const([1, 2]).dtype
dtype('int64')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.registry import OPS, Registry
from ...engine.state import STATE
from ...core.creation import as_tensor
from ...errors import OpError, check_dim  # (lives in core: the kernels use it too)
from ...core.tensor import Tensor

__all__ = ["ops", "const", "scale", "check_dim", "merges_to_view", "not_differentiable"]


def ops() -> Registry:
    """The generated ops (the registry `pushforward.methods.bind` fills with the generated module's names)."""
    return OPS


def const(arr: Any, dtype: Any = None) -> Tensor:
    """A constant (non-differentiable) tensor holding a copy of `arr` (index arrays, masks, weights)."""
    return as_tensor(np.array(arr, dtype=dtype))


def not_differentiable(t: Any, op: str, arg: str) -> Any:
    """An argument torch does not differentiate (a loss's class weights, soft_margin_loss's target).
    Refused, as torch refuses it, when t requires grad. Its tangent or Taylor series flows through the
    composite's ops: torch's forward mode drops it (a silent zero where the argument depends on the
    variable, which finite differences contradict), so there finite differences decide, not torch."""
    if isinstance(t, Tensor) and t.requires_grad and STATE.grad_enabled:
        raise OpError(
            f"{op}: the function is not differentiable with respect to argument '{arg}', which requires grad "
            "(detach() it to use its value as a constant)"
        )
    return t


def scale(t: Any, alpha: Any) -> Any:
    """t * alpha, skipping the multiply when alpha is 1."""
    return t if alpha == 1 else t * alpha


def merges_to_view(shape: tuple | list, strides: tuple | list) -> bool:
    """Whether reshaping dims of these sizes and strides (outermost first) into one is a view, as
    torch's reshape decides (dims of size 1 do not count): where it is not, torch's kernels that
    flatten an operand (matmul, einsum) contract a copy.

    >>> merges_to_view((2, 3), (24, 8)), merges_to_view((3, 2), (8, 24))
    (True, False)
    """
    dims = [(n, st) for n, st in zip(shape, strides) if n != 1]
    return all(outer == inner * n for (_, outer), (n, inner) in zip(dims, dims[1:]))
