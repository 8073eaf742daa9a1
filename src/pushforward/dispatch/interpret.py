"""Interpreted tensors: Tensor subclasses that run every op by rules of their own.

Some transforms are not a kind of tangent but a different meaning of each op: Taylor series
(`func.jet`), dependency patterns (`func.jacobian_sparsity`). Such a transform wraps the function's
inputs in a Tensor subclass whose class attribute `_interpreter` is an `Interpreter`; every op
that reaches one of them is handed to it (the fast paths test `type(x) is Tensor`, so a subclass
never takes them). The subclass must keep `_ad = True` so that no bare-kernel path reads its array.

An interpreter sees each op call as the engine's record (`Op`: name, kind, kernel, formulas), the
inputs as given (tensors, scalars, lists) and the op's other arguments. An interpreted tensor with a
`_like_of()` method gets `zeros_like` & co. of the plain tensor it returns (core/creation.py).
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from .oprecord import Op

__all__ = ["Interpreter", "interpreter_of"]


class Interpreter:
    """What an interpreted tensor's class points at: how it runs an op and an in-place op."""

    def run(self, op: Op, inputs: tuple, args: tuple) -> Any:
        """op(*inputs, *args) under this interpreter's rules."""
        raise NotImplementedError(f"{type(self).__name__} does not define how ops run")

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple) -> Any:
        """`target.op_(...)`: by default refused, naming the op (an interpreter may implement it)."""
        raise OpError(f"{op.name}_: in-place ops are not supported by {type(self).__name__}; write it out of place")


def interpreter_of(values) -> Interpreter | None:
    """The interpreter of the first interpreted tensor among `values` (list inputs included), or None."""
    for v in values:
        it = getattr(type(v), "_interpreter", None)
        if it is not None:
            return it
        if type(v) is list or type(v) is tuple:
            for x in v:
                it = getattr(type(x), "_interpreter", None)
                if it is not None:
                    return it
    return None
