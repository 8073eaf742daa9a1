"""Helpers shared by the SciPy faces (pushforward.scipy and its special functions, scipy/_special.py): reading arguments as tensors, and refusing a
derivative that does not exist.

>>> as_float([1, 2]).dtype
dtype('float64')
"""

from __future__ import annotations

import math
from typing import Any


from ..core.tensor import Tensor
from ..engine.grad_mode import is_grad_enabled
from ..ops import generated as ops
from ..numpy._values import as_t, floating

__all__ = ["as_float", "standard", "off_support", "differentiated", "refuse_derivative"]


def as_float(x: Any) -> Tensor:
    """x as a floating tensor (integers become float64; lists holding tensors are stacked)."""
    return floating(as_t(x))


def standard(x: Any, loc: Any, scale: Any) -> Tensor:
    """(x - loc) / scale: where SciPy's location-scale families evaluate their standard form."""
    return (as_float(x) - as_float(loc)) / as_float(scale)


def off_support(outside: Tensor, value: Tensor) -> Tensor:
    """A log density: value, and -inf where x is outside the support (there value may be nan: the
    log of a negative number)."""
    return ops.where(outside, -math.inf, value)


def differentiated(x: Any) -> bool:
    """Could anything differentiate x (a tape or a tangent)?"""
    if not isinstance(x, Tensor):
        return False
    return bool((x._requires_grad and is_grad_enabled()) or x._fw is not None or x._st.dual)


def refuse_derivative(who: str, argname: str, x: Any) -> None:
    """Raise NotImplementedError when x, an argument `who` is not differentiable in, is differentiated."""
    if differentiated(x):
        raise NotImplementedError(
            f"{who}: the derivative with respect to {argname} is not implemented (it has no closed form "
            f"in terms of the functions we have); pass {argname} as a constant (t.detach())"
        )
