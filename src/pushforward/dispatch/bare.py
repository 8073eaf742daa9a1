"""The bare-kernel path of the generated ops (PyTorch's generated VariableType is the model).

Each generated element-wise or reduction op with one or two plain Tensor inputs calls
`run1` / `run2` with its kernel: when no input needs autodiff, the op is that kernel on the
arrays and a new tensor around the result, with no further call; otherwise dispatch.apply takes
over. The fast path is the one of dispatch.run_tape (same test, same errors, same weak Python
scalars), written out so that the commonest call costs one Python frame less.
(No `*args` in these signatures: CPython 3.11 calls a function with exact positional
parameters and defaults faster, ~0.1 us per op.)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..core.tensor import Tensor
from .aliasing import unshared
from .classifier import apply
from .oprecord import SCALAR_TYPES, Op, op_error

__all__ = ["run1", "run2"]

_new = object.__new__


def run1(op: Op, kernel: Callable, x, args: tuple = ()) -> Tensor:
    """op(x, *args): `kernel` on x's array when x needs no autodiff (else dispatch.apply).

    >>> import pushforward as pf, numpy as np
    >>> from pushforward.ops.generated import NEG
    >>> run1(NEG, np.negative, pf.tensor([1.0, 2.0]))
    tensor([-1., -2.])
    """
    if type(x) is Tensor and not x._ad:
        d = x._data
        try:
            out = kernel(d) if not args else kernel(d, args[0]) if len(args) == 1 else kernel(d, *args)
        except Exception as e:
            raise op_error(op, (x,), args, e) from None
        if type(out) is np.ndarray and out.base is None:  # a fresh array: the common case
            t = _new(Tensor)
            t._data = out
            return t
        return _fresh(out, (d,))
    return apply(op, (x,), args)


def run2(op: Op, kernel: Callable, a, b, args: tuple = ()) -> Tensor:
    """op(a, b, *args), either of a, b possibly a Python scalar (NumPy's weak scalars):
    `kernel` on the arrays when neither needs autodiff (else dispatch.apply).

    >>> import pushforward as pf, numpy as np
    >>> from pushforward.ops.generated import MUL
    >>> run2(MUL, np.multiply, pf.tensor([1.0, 2.0]), 3.0)
    tensor([3., 6.])
    """
    ta = type(a)
    tb = type(b)
    if ta is Tensor and tb is Tensor:  # the common case first
        if a._ad or b._ad:
            return apply(op, (a, b), args)
        da = a._data
        db = b._data
    elif ta is Tensor and tb in SCALAR_TYPES and not a._ad:
        da = a._data
        db = b
    elif ta in SCALAR_TYPES and tb is Tensor and not b._ad:
        da = a
        db = b._data
    else:
        return apply(op, (a, b), args)
    try:
        # (a star call of a Python kernel costs ~0.1 us more than a plain one: one argument is common)
        out = kernel(da, db) if not args else kernel(da, db, args[0]) if len(args) == 1 else kernel(da, db, *args)
    except Exception as e:
        raise op_error(op, (a, b), args, e) from None
    if type(out) is np.ndarray and out.base is None:
        t = _new(Tensor)
        t._data = out
        return t
    return _fresh(out, (da, db))


def _fresh(out, datas) -> Tensor:
    """A tensor around a non-view op's kernel result, as oprecord.run_kernel makes it: a NumPy
    view of an input is copied (aliasing.unshared), a NumPy scalar becomes a 0-d array."""
    t = _new(Tensor)
    t._data = (out if out.base is None else unshared(out, datas)) if isinstance(out, np.ndarray) else np.asanyarray(out)
    return t
