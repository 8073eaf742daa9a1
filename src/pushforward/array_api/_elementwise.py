"""The standard's element-wise functions: NumPy's (the ops pushforward.numpy's ufuncs run) under
the standard's signatures, a Python scalar standing for either operand of a binary one (it
takes the other operand's dtype: a weak scalar). Local are only the standard's special cases that
NumPy's kernels miss (complex expm1 and tanh, floor division by an infinity), nextafter (NumPy's
has no derivative; the standard's is the identity in x1 plus a step) and the shifts (integers only).

>>> import pushforward.array_api as xp
>>> xp.greater(xp.asarray([1.0, 3.0]), 2.0)
tensor([False,  True])
>>> xp.floor_divide(xp.asarray([7, -7]), 2)
tensor([ 3, -4])
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

import pushforward as pf

from .. import numpy as pnp
from ..core.tensor import Tensor
from ..errors import OpTypeError
from ..ops import generated as ops
from ._common import check_array, constant, elementwise

UNARY = "abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp floor imag isfinite isinf isnan"
UNARY += " log log1p log2 log10 logical_not negative positive real reciprocal round sign signbit sin sinh sqrt"
UNARY += " square tan trunc"
BINARY = "add atan2 bitwise_and bitwise_or bitwise_xor copysign divide equal greater greater_equal hypot less"
BINARY += " less_equal logaddexp logical_and logical_or logical_xor maximum minimum multiply not_equal pow"
BINARY += " remainder subtract"


def _op(name: str) -> Callable:
    """The op pushforward.numpy's ufunc of that name runs: pushforward's function of the standard's name
    (derivatives.yaml's name or alias), called directly (NumPy's ufunc dispatch costs 3 to 5 us a call);
    pushforward.numpy's ufunc where pushforward has no such name. (Not `equal`: torch's, and so
    pf.equal, is whole-tensor equality, a bool; the array object's `==` is the element-wise one.)"""
    if name == "equal":
        return operator.eq
    return getattr(pf, name, None) or getattr(pnp, name)


SAME = {n: elementwise(n, _op(n), False) for n in UNARY.split()}
SAME |= {n: elementwise(n, _op(n), True) for n in BINARY.split()}
globals().update(SAME)

__all__ = [*SAME, "clip", "expm1", "tanh", "floor_divide", "nextafter", "bitwise_left_shift", "bitwise_right_shift"]


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - the standard's names
    """x clamped to [min, max] (arrays or scalars), in x's dtype; differentiable.

    >>> import pushforward.array_api as xp
    >>> xp.clip(xp.asarray([-1.0, 0.5, 2.0]), 0.0, 1.0)
    tensor([0. , 0.5, 1. ])
    """
    out = pnp.clip(check_array("clip", x), min, max)
    return out if out.dtype == x.dtype else ops.to(out, x.dtype, copy=True)


def expm1(x: Tensor, /) -> Tensor:
    """exp(x) - 1, accurate near 0; a complex x with an infinite or NaN part, or zero, takes exp(x) - 1's
    value (the standard's special cases: expm1(inf + 0j) is inf + 0j, NumPy's kernel gives NaN;
    expm1(-0 + 0j) is +0 + 0j, NumPy's kernel gives -0 + 0j).

    >>> import pushforward.array_api as xp
    >>> xp.expm1(xp.asarray([0.0, 1e-10]))
    tensor([0.e+00, 1.e-10])
    """
    out = pnp.expm1(check_array("expm1", x))
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
    out = pnp.tanh(check_array("tanh", x))
    if x.dtype.kind != "c":
        return out
    edge = ops.logical_and(ops.isinf(ops.real(x)), ops.isfinite(ops.imag(x)))
    return ops.where(edge, ops.to(ops.sign(ops.real(x)), x.dtype, copy=False), out)


# the array object's `//`: the standard's floor division (an infinite operand gives the quotient's
# limit, where NumPy's gives nan)
floor_divide = elementwise("floor_divide", operator.floordiv, True)


def _nextafter(x1: Any, x2: Any) -> Tensor:
    """The next representable value after x1 towards x2 (as a function of x1, the identity plus a
    constant: its derivative is 1 in x1 and 0 in x2).

    >>> import pushforward.array_api as xp
    >>> xp.nextafter(xp.asarray(1.0), 2.0) > 1.0
    tensor(True)
    """
    dt = x1.dtype if isinstance(x1, Tensor) else x2.dtype
    a, b = (np.asarray(v.detach().numpy() if isinstance(v, Tensor) else v, dtype=dt) for v in (x1, x2))
    step = np.nextafter(a, b)
    if not isinstance(x1, Tensor) or not np.all(np.isfinite(step)) or not np.all(np.isfinite(a)):
        return constant(np.broadcast_arrays(step, a, b)[0])
    # x1 + (step - x1) is step exactly, and x1's derivative flows; where x1 == x2 the result is
    # x2 itself (its sign of zero included)
    moved = ops.add(x1, constant(np.broadcast_arrays(step - a, b)[0]))
    return ops.where(constant(np.broadcast_arrays(step != a, b)[0]), moved, constant(np.broadcast_arrays(step, b)[0]))


nextafter = elementwise("nextafter", _nextafter, True, _nextafter.__doc__)


def _shift(name: str, op: Callable) -> Callable:
    def shift(x1: Any, x2: Any) -> Tensor:
        kinds = {v.dtype.kind for v in (x1, x2) if isinstance(v, Tensor)}
        if not kinds <= set("iu"):
            raise OpTypeError(f"array_api.{name}(): integer operands only, got dtypes {sorted(kinds)}")
        return op(x1, x2)

    return elementwise(name, shift, True)


# the array object's `<<` and `>>` (the shift ops)
bitwise_left_shift = _shift("bitwise_left_shift", operator.lshift)
bitwise_right_shift = _shift("bitwise_right_shift", operator.rshift)
