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
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "trunc",
]


def _unary(name: str, op: Callable) -> Callable:
    def fn(x: Tensor, /) -> Tensor:
        return op(check_array(name, x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's {name}: pushforward's differentiable `{op.__qualname__}`."
    return fn


def _binary(name: str, op: Callable) -> Callable:
    def fn(x1: Any, x2: Any, /) -> Tensor:
        _operands(name, x1, x2)
        return op(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's {name}: pushforward's differentiable `{op.__qualname__}` (a Python scalar may stand for an operand)."
    return fn


def _operands(name: str, x1: Any, x2: Any) -> None:
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise OpTypeError(f"array_api.{name}(): at least one operand must be an array (got two scalars)")
    for x in (x1, x2):
        if not isinstance(x, (Tensor, *SCALARS)):
            raise OpTypeError(f"array_api.{name}(): operands are arrays or Python scalars, got {type(x).__name__}")


# The standard's name = our op (the ops are the one home of kernels and derivatives).
abs = _unary("abs", ops.abs)
acos = _unary("acos", ops.acos)
acosh = _unary("acosh", ops.acosh)
asin = _unary("asin", ops.asin)
asinh = _unary("asinh", ops.asinh)
atan = _unary("atan", ops.atan)
atanh = _unary("atanh", ops.atanh)
bitwise_invert = _unary("bitwise_invert", ops.bitwise_not)
ceil = _unary("ceil", ops.ceil)
conj = _unary("conj", ops.conj)
cos = _unary("cos", ops.cos)
cosh = _unary("cosh", ops.cosh)
exp = _unary("exp", ops.exp)
floor = _unary("floor", ops.floor)
imag = _unary("imag", ops.imag)
isfinite = _unary("isfinite", ops.isfinite)
isinf = _unary("isinf", ops.isinf)
isnan = _unary("isnan", ops.isnan)
log = _unary("log", ops.log)
log1p = _unary("log1p", ops.log1p)
log2 = _unary("log2", ops.log2)
log10 = _unary("log10", ops.log10)
logical_not = _unary("logical_not", ops.logical_not)
negative = _unary("negative", ops.neg)
real = _unary("real", ops.real)
reciprocal = _unary("reciprocal", ops.reciprocal)
round = _unary("round", ops.round)
signbit = _unary("signbit", ops.signbit)
sin = _unary("sin", ops.sin)
sinh = _unary("sinh", ops.sinh)
square = _unary("square", ops.square)
sqrt = _unary("sqrt", ops.sqrt)
tan = _unary("tan", ops.tan)
trunc = _unary("trunc", ops.trunc)
add = _binary("add", ops.add)
atan2 = _binary("atan2", ops.atan2)
bitwise_and = _binary("bitwise_and", ops.bitwise_and)
bitwise_or = _binary("bitwise_or", ops.bitwise_or)
bitwise_xor = _binary("bitwise_xor", ops.bitwise_xor)
copysign = _binary("copysign", ops.copysign)
divide = _binary("divide", ops.div)
equal = _binary("equal", ops.eq)
greater = _binary("greater", ops.gt)
greater_equal = _binary("greater_equal", ops.ge)
hypot = _binary("hypot", ops.hypot)
less = _binary("less", ops.lt)
less_equal = _binary("less_equal", ops.le)
logaddexp = _binary("logaddexp", ops.logaddexp)
logical_and = _binary("logical_and", ops.logical_and)
logical_or = _binary("logical_or", ops.logical_or)
logical_xor = _binary("logical_xor", ops.logical_xor)
maximum = _binary("maximum", ops.maximum)
minimum = _binary("minimum", ops.minimum)
multiply = _binary("multiply", ops.mul)
not_equal = _binary("not_equal", ops.ne)
pow = _binary("pow", ops.pow)
remainder = _binary("remainder", ops.remainder)
subtract = _binary("subtract", ops.sub)


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - the standard's names
    """x clamped to [min, max] (arrays or scalars), in x's dtype; differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.clip(xp.asarray([-1.0, 0.5, 2.0]), 0.0, 1.0)
    tensor([0. , 0.5, 1. ])
    """
    check_array("clip", x)
    if min is None and max is None:
        return ops.clone(x)
    out = ops.clamp(x, min, max)
    return out if out.dtype == x.dtype else ops.to(out, x.dtype, copy=True)


def expm1(x: Tensor, /) -> Tensor:
    """exp(x) - 1, accurate near 0; a complex x with an infinite or NaN part, or zero, takes exp(x) - 1's
    value (the standard's special cases: expm1(inf + 0j) is inf + 0j, NumPy's kernel gives NaN;
    expm1(-0 + 0j) is +0 + 0j, NumPy's kernel gives -0 + 0j).

    >>> import pushforward.array_api as xp
    >>> xp.expm1(xp.asarray([0.0, 1e-10]))
    tensor([0.e+00, 1.e-10])
    """
    check_array("expm1", x)
    out = ops.expm1(x)
    if x.dtype.kind != "c":
        return out
    return ops.where(ops.isfinite(x) & (x != 0), out, ops.sub(ops.exp(x), 1))


def tanh(x: Tensor, /) -> Tensor:
    """The hyperbolic tangent; a complex x with an infinite real part and a finite imaginary part
    gives ±1 + 0j (the standard's special case; NumPy's kernel may give -0j).

    >>> import pushforward.array_api as xp
    >>> xp.tanh(xp.asarray([complex("inf+3j")]))
    tensor([1.+0.j], dtype=pushforward.complex128)
    """
    check_array("tanh", x)
    out = ops.tanh(x)
    if x.dtype.kind != "c":
        return out
    re, im = ops.real(x), ops.imag(x)
    edge = ops.logical_and(ops.isinf(re), ops.isfinite(im))
    return ops.where(edge, ops.to(ops.sign(re), x.dtype, copy=False), out)


def floor_divide(x1: Any, x2: Any, /) -> Tensor:
    """The floor of x1 / x2 (Python's //; an infinite operand gives the quotient's limit).

    >>> import pushforward.array_api as xp
    >>> xp.floor_divide(xp.asarray([7.0, -7.0, float("inf")]), 2.0)
    tensor([ 3., -4., inf])
    """
    _operands("floor_divide", x1, x2)
    return floordiv(x1, x2)


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


def _shift(name: str, op: Callable) -> Callable:
    def fn(x1: Any, x2: Any, /) -> Tensor:
        _operands(name, x1, x2)
        kinds = {v.dtype.kind for v in (x1, x2) if isinstance(v, Tensor)}
        if not kinds <= set("iu"):
            raise OpTypeError(f"array_api.{name}(): integer operands only, got dtypes {sorted(kinds)}")
        return op(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's {name}: pushforward's `{op.__qualname__}` (integers; no derivative)."
    return fn


bitwise_left_shift = _shift("bitwise_left_shift", ops.bitwise_left_shift)
bitwise_right_shift = _shift("bitwise_right_shift", ops.bitwise_right_shift)
