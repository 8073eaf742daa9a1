"""Attach the generated ops and the autodiff methods to Tensor: methods, Python operators and
properties; and fill the registries through which lower layers reach the ops.

Kept apart from core/tensor.py so that the Tensor class (core) imports neither the generated
module (which imports Tensor) nor the autodiff layer (tests/test_layering.py).
"""

from __future__ import annotations

from typing import Any, Callable

from ..dispatch.general import prim_at
from ..dispatch.inplace import apply_inplace
from ..ops import generated as ops
from ..core.tensor import Tensor, _autodiff, device
from ..engine import graph as graph
from ..engine.tangents import levels_of, tangent_of
from ..engine.registry import DISPATCH, OPS
from ..engine.state import STATE
from ..errors import OpTypeError
from . import logic
from .indexing import getitem, setitem
from .lazy import compute_method, guard_composites, to_dask
from .array_object import bind_array_object

__all__ = ["bind", "bind_numpy_protocols"]

# The layers below the generated module reach its ops (and dispatch's tangent fitting) through
# these registries; filled here, at import time, before any op can run.
OPS.fill({k: v for k, v in vars(ops).items() if not k.startswith("__")})
DISPATCH.fill({"prim_at": prim_at})
_autodiff.grad_accumulator = graph.grad_accumulator


def _reflected(fn):
    def method(self, other):
        return fn(other, self)

    method.__name__ = "__r" + fn.__name__ + "__"
    return method


_OPERATORS = {
    "__add__": ops.add,
    "__sub__": ops.sub,
    "__mul__": ops.mul,
    "__truediv__": ops.div,
    "__pow__": ops.pow,
    "__matmul__": ops.c_matmul,  # (matmul's body without its `out=` test: `a @ b` is hot in loops)
    "__mod__": ops.remainder,
    "__eq__": ops.eq,
    "__ne__": ops.ne,
    "__lt__": ops.lt,
    "__le__": ops.le,
    "__gt__": ops.gt,
    "__ge__": ops.ge,
    "__and__": ops.bitwise_and,
    "__or__": ops.bitwise_or,
    "__xor__": ops.bitwise_xor,
}
_REFLECTED = {
    "__radd__": ops.add,
    "__rsub__": ops.sub,
    "__rmul__": ops.mul,
    "__rpow__": ops.pow,
    "__rmatmul__": ops.c_matmul,
    "__rmod__": ops.remainder,
    "__rand__": ops.bitwise_and,
    "__ror__": ops.bitwise_or,
    "__rxor__": ops.bitwise_xor,
}
_AUGMENTED = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_", "__ipow__": "pow_"}


def _floordiv(self, other):
    return ops.div(self, other, rounding_mode="floor")


def _rtruediv(self, other):
    """`number / x`: reciprocal(x) * number, as torch, so the tape keeps the result rather than x
    (an in-place op on x afterwards must not break the gradient)."""
    if self.dtype.kind in "fc" and type(other) in (int, float, complex):
        return ops.mul(ops.reciprocal(self), other)
    return ops.div(other, self)


def _rfloordiv(self, other):
    return ops.div(other, self, rounding_mode="floor")


def _fill_(self, value):
    """Fill with a number or 0-d tensor (in place)."""
    return self.copy_(value)


def _comparison_(fn):
    """torch's in-place comparison (`x.eq_(y)`): the comparison's result, as 0/1 in self's dtype,
    written into self. It is piecewise constant: its derivatives are zero (copy_ of a constant)."""

    def method(self, other):
        return self.copy_(fn(self, other))

    method.__name__ = method.__qualname__ = fn.__name__ + "_"
    method.__doc__ = f"self = {fn.__name__}(self, other) in self's dtype, in place (its derivative is zero)."
    return method


def _zero_(self):
    """Fill with zeros (in place)."""
    return self.copy_(0)


class _C:
    """The layout flags of an array without one (a Dask array: chunks, no memory layout)."""

    c_contiguous = True


def bind() -> None:
    """Attach the ops (as methods, operators and properties), the autodiff methods and the logic
    reductions to Tensor: the one place Tensor is given methods from above (with
    bind_numpy_protocols, which the NumPy face's handlers come to)."""
    _bind_autodiff()
    for name, fn in ops.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    for name, fn in _REFLECTED.items():
        setattr(Tensor, name, _reflected(fn))
    for name, meth in _AUGMENTED.items():
        setattr(Tensor, name, getattr(Tensor, meth))
    Tensor.__floordiv__ = _floordiv
    Tensor.__rfloordiv__ = _rfloordiv
    Tensor.__rtruediv__ = _rtruediv
    Tensor.__neg__ = ops.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = ops.abs
    Tensor.__invert__ = ops.bitwise_not
    Tensor.__hash__ = object.__hash__
    Tensor.copy_ = ops.copy_
    Tensor.fill_ = _fill_
    Tensor.zero_ = _zero_
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Tensor, name + "_", _comparison_(getattr(ops, name)))
    Tensor.T = property(lambda self: ops.permute(self, tuple(range(self.ndim - 1, -1, -1))))
    Tensor.mT = property(ops.mT)
    Tensor.mH = property(lambda self: ops.mT(self).conj())
    Tensor.H = property(lambda self: ops.t(self).conj())
    Tensor.real = property(ops.real)
    Tensor.imag = property(ops.imag)
    Tensor.max = ops.max
    Tensor.min = ops.min
    Tensor.contiguous = lambda self: self if getattr(self._data, "flags", _C).c_contiguous else ops.clone(self)
    Tensor.compute = compute_method
    Tensor.to_dask = to_dask
    guard_composites(vars(ops))
    Tensor.index_put_ = lambda self, indices, values, accumulate=False: _index_put_(self, indices, values, accumulate)
    # ---- nn, sorting, scatter, composites
    Tensor.flip = _flip
    Tensor.masked_scatter_ = lambda self, mask, source: _assign(self, ops.masked_scatter(self, mask, source))
    Tensor.put_ = lambda self, index, source, accumulate=False: _assign(self, ops.put(self, index, source, accumulate))
    Tensor.to = _to  # torch's overloads in front of the generated op
    for name in ("all", "any", "isclose", "allclose", "equal"):
        setattr(Tensor, name, getattr(logic, name))
    bind_array_object()  # the Array API standard's array object


def bind_numpy_protocols(array_ufunc: Callable, array_function: Callable, array: Callable, methods: dict) -> None:
    """Attach NumPy's protocols (and the ndarray methods NumPy code calls) to Tensor: the NumPy
    face's handlers (numpy/_api.py), a layer above this one, handed over by the package that
    imports both. They are bound as they are, so NumPy's dispatch lands in the face in one frame."""
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function
    Tensor.__array__ = array
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """torch's `.to` overloads: to(dtype), to(device[, dtype]), to(other), with copy=/non_blocking=
    keywords; the device must be the CPU. Casts are differentiable copies (the generated `to` op)."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise OpTypeError(f"to(): unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a._data.dtype
        elif isinstance(a, str):
            dev = a
        elif isinstance(a, bool):  # to(dtype, non_blocking, copy): the second positional flag is copy
            flags = [f for f in args if isinstance(f, bool)]
            copy = copy or (len(flags) > 1 and flags[1])
        elif a is not None:
            dtype = a
    if dev is not None:
        device(dev)
    if dtype is None and not copy:
        return self
    return ops.to(self, dtype, copy)


def _assign(self, value):
    """In-place form of a composite: the out-of-place result copied into self (history and tangents too)."""
    return self.copy_(value)


def _flip(self, *dims):
    """Reverse the order along dims, given as a list or as separate arguments: x.flip(0, 2)."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return ops.flip(self, list(dims))


def _index_put_(self, indices, values, accumulate=False):
    return apply_inplace(ops.INDEX_PUT, self, (self, values), (indices, accumulate))


# ---- autodiff methods (here, not in core/tensor.py, which may not import autograd)


def _grad_fn(self: Tensor) -> Any:
    """The node that made this tensor (None for a leaf); a view's is rebuilt after an in-place write."""
    if self._base is not None:
        graph.refresh_view(self)
    return self._grad_fn


def _retain_grad(self: Tensor) -> None:
    """Keep this non-leaf's gradient in `.grad` after backward."""
    graph.retain_grad(self)


def _register_hook(self: Tensor, hook: Callable) -> graph.RemovableHandle:
    """Call hook(grad) when this tensor's gradient is computed; a non-None return replaces it."""
    return graph.register_hook(self, hook)


def _backward(
    self: Tensor, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False, inputs: Any = None
) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's .grad."""
    graph.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


def _has_tangent(self: Tensor) -> bool:
    return bool(levels_of(self))


def _tangent_reprs(self: Tensor) -> list:
    """`tangent=...` (one level, level 0) or `tangents={level: ..., ...}`: the tangents' values at
    each live level (its own or its base's), keyed by the level numbers the user sees."""
    if self._fw is None and not self._st.dual:
        return []
    found = sorted((STATE.by_uid[lv].index, tangent_of(self, lv)) for lv in levels_of(self))
    if not found:
        return []
    if len(found) == 1 and found[0][0] == 0:
        return ["tangent=" + repr(found[0][1])]
    return ["tangents={" + ", ".join(f"{k}: {t!r}" for k, t in found) + "}"]


def _bind_autodiff() -> None:
    Tensor.grad_fn = property(_grad_fn)
    Tensor.retain_grad = _retain_grad
    Tensor.register_hook = _register_hook
    Tensor.backward = _backward
    Tensor._has_tangent = _has_tangent
    Tensor._tangent_reprs = _tangent_reprs
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
