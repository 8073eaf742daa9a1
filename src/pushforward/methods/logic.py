"""Comparisons that are not differentiable: isclose, allclose, equal, all, any (torch names).

Their results are booleans, which carry no gradient or tangent, so they read the primal
values (`_data`) of tensors that require grad or are dual without going through the tape.

>>> import pushforward as pf
>>> pf.allclose(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 2.0 + 1e-9]))
True
>>> pf.tensor([1.0, 0.0]).any(), pf.tensor([1.0, 0.0]).all()
(tensor(True), tensor(False))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OpTypeError
from ..core.tensor import Tensor, wrap
from ..kernels.basic import _axes

__all__ = ["isclose", "allclose", "equal", "all", "any"]


def _values(x, who: str, name: str) -> np.ndarray:
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (int, float, complex, bool, np.ndarray, np.generic)):
        return np.asarray(x)
    raise OpTypeError(f"{who}(): argument '{name}' must be a Tensor or a number, not {type(x).__name__}")


def isclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise |input - other| <= atol + rtol * |other| (a bool tensor)."""
    a, b = _values(input, "isclose", "input"), _values(other, "isclose", "other")
    return wrap(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True when isclose holds for every element (a Python bool, as torch)."""
    a, b = _values(input, "allclose", "input"), _values(other, "allclose", "other")
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input: Any, other: Any) -> bool:
    """True when both have the same shape and elements."""
    a, b = _values(input, "equal", "input"), _values(other, "equal", "other")
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _reduce(fn, x, dim, keepdim: bool, who: str) -> Tensor:
    a = _values(x, who, "input")
    axis = _axes(dim, a.ndim)
    return wrap(np.asarray(fn(a, axis=axis, keepdims=keepdim)))


def all(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001 - torch's name
    """True where every element (along `dim`, or all of them) is nonzero (a bool tensor)."""
    return _reduce(np.all, input, dim, keepdim, "all")


def any(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001 - torch's name
    """True where some element (along `dim`, or any of them) is nonzero (a bool tensor)."""
    return _reduce(np.any, input, dim, keepdim, "any")
