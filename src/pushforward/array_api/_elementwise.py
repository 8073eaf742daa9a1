"""The standard's element-wise functions: each is one of our differentiable ops (torch's name in
the table below) or a composite of ops; Python scalars may stand for either operand of a binary
function, and take the other operand's dtype (weak scalars).

>>> import pushforward.array_api as xp
>>> xp.greater(xp.asarray([1.0, 3.0]), 2.0)
tensor([False,  True])
>>> xp.floor_divide(xp.asarray([7, -7]), 2)
tensor([ 3, -4])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpTypeError
from ..methods.array_object import floordiv
from ..ops import generated as ops
from ._common import SCALARS, check_array, constant, values_of

__all__ = [
    "UNARY",
    "BINARY",
    "clip",
    "floor_divide",
    "isinf",
    "logical_xor",
    "positive",
    "sign",
    "signbit",
    "nextafter",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "elementwise_functions",
]

# the standard's name -> our op's (the ops are the one home of kernels and derivatives)
UNARY = {
    "abs": "abs",
    "acos": "acos",
    "acosh": "acosh",
    "asin": "asin",
    "asinh": "asinh",
    "atan": "atan",
    "atanh": "atanh",
    "bitwise_invert": "bitwise_not",
    "ceil": "ceil",
    "conj": "conj",
    "cos": "cos",
    "cosh": "cosh",
    "exp": "exp",
    "expm1": "expm1",
    "floor": "floor",
    "imag": "imag",
    "isfinite": "isfinite",
    "isnan": "isnan",
    "log": "log",
    "log1p": "log1p",
    "log2": "log2",
    "log10": "log10",
    "logical_not": "logical_not",
    "negative": "neg",
    "real": "real",
    "reciprocal": "reciprocal",
    "round": "round",
    "sin": "sin",
    "sinh": "sinh",
    "square": "square",
    "sqrt": "sqrt",
    "tan": "tan",
    "tanh": "tanh",
    "trunc": "trunc",
}
BINARY = {
    "add": "add",
    "atan2": "atan2",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "copysign": "copysign",
    "divide": "div",
    "equal": "eq",
    "greater": "gt",
    "greater_equal": "ge",
    "hypot": "hypot",
    "less": "lt",
    "less_equal": "le",
    "logaddexp": "logaddexp",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "maximum": "maximum",
    "minimum": "minimum",
    "multiply": "mul",
    "not_equal": "ne",
    "pow": "pow",
    "remainder": "remainder",
    "subtract": "sub",
}


def _unary(name: str, op: Callable) -> Callable:
    def fn(x: Tensor, /) -> Tensor:
        return op(check_array(name, x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's {name}: pushforward's differentiable `{op.__name__}`."
    return fn


def _binary(name: str, op: Callable) -> Callable:
    def fn(x1: Any, x2: Any, /) -> Tensor:
        _operands(name, x1, x2)
        return op(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's {name}: pushforward's differentiable `{op.__name__}` (a Python scalar may stand for an operand)."
    return fn


def _operands(name: str, x1: Any, x2: Any) -> None:
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise OpTypeError(f"array_api.{name}(): at least one operand must be an array (got two scalars)")
    for x in (x1, x2):
        if not isinstance(x, (Tensor, *SCALARS)):
            raise OpTypeError(f"array_api.{name}(): operands are arrays or Python scalars, got {type(x).__name__}")


def elementwise_functions() -> dict:
    """The table's functions, built from our ops, keyed by the standard's names."""
    out = {name: _unary(name, getattr(ops, op)) for name, op in UNARY.items()}
    out.update({name: _binary(name, getattr(ops, op)) for name, op in BINARY.items()})
    return out


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - the standard's names
    """x clamped to [min, max] (arrays or scalars), in x's dtype; differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.clip(xp.asarray([-1.0, 0.5, 2.0]), 0.0, 1.0)
    tensor([0.0000, 0.5000, 1.0000])
    """
    check_array("clip", x)
    if min is None and max is None:
        return ops.clone(x)
    out = ops.clamp(x, min, max)
    return out if out.dtype == x.dtype else ops.to(out, x.dtype, copy=True)


def floor_divide(x1: Any, x2: Any, /) -> Tensor:
    """The floor of x1 / x2 (Python's //; an infinite operand gives the quotient's limit).

    >>> import pushforward.array_api as xp
    >>> xp.floor_divide(xp.asarray([7.0, -7.0, float("inf")]), 2.0)
    tensor([ 3., -4., inf])
    """
    _operands("floor_divide", x1, x2)
    return floordiv(x1, x2)


def isinf(x: Tensor, /) -> Tensor:
    """True where x is infinite (a complex number: either part).

    >>> import pushforward.array_api as xp
    >>> xp.isinf(xp.asarray([1.0, float("-inf"), float("nan")]))
    tensor([False,  True, False])
    """
    check_array("isinf", x)
    if x.dtype.kind == "c":
        return ops.logical_or(isinf(ops.real(x)), isinf(ops.imag(x)))
    return ops.logical_and(ops.logical_not(ops.isfinite(x)), ops.logical_not(ops.isnan(x)))


def logical_xor(x1: Any, x2: Any, /) -> Tensor:
    """Element-wise exclusive or of the truth values.

    >>> import pushforward.array_api as xp
    >>> xp.logical_xor(xp.asarray([True, False]), True)
    tensor([False,  True])
    """
    _operands("logical_xor", x1, x2)
    return ops.ne(ops.ne(x1, False), ops.ne(x2, False)) if isinstance(x1, Tensor) else logical_xor(x2, x1)


def positive(x: Tensor, /) -> Tensor:
    """+x (a differentiable copy).

    >>> import pushforward.array_api as xp
    >>> xp.positive(xp.asarray([-1.0]))
    tensor([-1.])
    """
    return ops.clone(check_array("positive", x))


def sign(x: Tensor, /) -> Tensor:
    """The sign of x; of a complex number, x / |x| (0 at 0); differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.sign(xp.asarray([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    check_array("sign", x)
    return ops.sgn(x) if x.dtype.kind == "c" else ops.sign(x)


def signbit(x: Tensor, /) -> Tensor:
    """True where the sign bit of x is set (-0.0 and NaNs with the bit included); no derivative.

    >>> import pushforward.array_api as xp
    >>> xp.signbit(xp.asarray([-0.0, 0.0, -1.0]))
    tensor([ True, False,  True])
    """
    return constant(np.signbit(values_of(check_array("signbit", x))))


def nextafter(x1: Any, x2: Any, /) -> Tensor:
    """The next representable value after x1 towards x2 (as a function of x1, the identity plus a
    constant: its derivative is 1 in x1 and 0 in x2).

    >>> import pushforward.array_api as xp
    >>> bool(xp.nextafter(xp.asarray(1.0), 2.0) > 1.0)
    True
    """
    _operands("nextafter", x1, x2)
    a, b = values_of(x1), values_of(x2)
    dt = x1.dtype if isinstance(x1, Tensor) else x2.dtype
    a, b = np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)
    step = np.nextafter(a, b)
    if not isinstance(x1, Tensor) or not np.all(np.isfinite(step)) or not np.all(np.isfinite(a)):
        return constant(np.broadcast_arrays(step, a, b)[0])
    # x1 + (step - x1) is step exactly, and x1's derivative flows; where x1 == x2 the result is
    # x2 itself (its sign of zero included)
    moved = ops.add(x1, constant(np.broadcast_arrays(step - a, b)[0]))
    return ops.where(constant(np.broadcast_arrays(step != a, b)[0]), moved, constant(np.broadcast_arrays(step, b)[0]))


def _shift(name: str, fn: Callable, x1: Any, x2: Any) -> Tensor:
    _operands(name, x1, x2)
    a, b = values_of(x1), values_of(x2)
    dt = np.result_type(*(v.dtype for v in (x1, x2) if isinstance(v, Tensor)))
    if dt.kind not in "iu":
        raise OpTypeError(f"array_api.{name}(): integer operands only, got {dt}")
    return constant(fn(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt)).astype(dt))


def bitwise_left_shift(x1: Any, x2: Any, /) -> Tensor:
    """x1 shifted left by x2 bits (integers; no derivative).

    >>> import pushforward.array_api as xp
    >>> xp.bitwise_left_shift(xp.asarray([1, 2]), 2)
    tensor([4, 8])
    """
    return _shift("bitwise_left_shift", np.left_shift, x1, x2)


def bitwise_right_shift(x1: Any, x2: Any, /) -> Tensor:
    """x1 shifted right by x2 bits, sign-extending (integers; no derivative).

    >>> import pushforward.array_api as xp
    >>> xp.bitwise_right_shift(xp.asarray([-8, 8]), 2)
    tensor([-2,  2])
    """
    return _shift("bitwise_right_shift", np.right_shift, x1, x2)
