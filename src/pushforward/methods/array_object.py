"""The Array API standard's array object on Tensor: `__array_namespace__` (the namespace
`pushforward.array_api`, loaded on first use so importing pushforward stays fast), DLPack export,
`to_device`, and the operators the standard has and torch's Tensor lacks (shifts, in-place
`//=`, `%=`, `&=`, ...), each over our ops.

>>> import numpy as np, pushforward as pf
>>> x = pf.tensor([1.0, 2.0])
>>> x.__array_namespace__().__array_api_version__
'2024.12'
>>> np.from_dlpack(x)
array([1., 2.])
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor, device
from ..errors import OpTypeError
from ..ops import generated as ops

__all__ = ["bind_array_object", "floordiv"]

_DLPACK_CPU = 1  # DLDeviceType kDLCPU


def _array_namespace(self: Tensor, /, *, api_version: str | None = None) -> Any:
    """pushforward.array_api (the standard's namespace), for api_version None or a covered version."""
    # the public namespace sits above this layer: reached by name, and only when first asked for
    return importlib.import_module("pushforward.array_api")._namespace_for(api_version)


def _dlpack(
    self: Tensor, /, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: bool | None = None
) -> Any:
    """A DLPack capsule of the values (shared with the tensor unless copied); a tensor with a
    derivative (requiring grad, or dual) is refused, as torch refuses one requiring grad."""
    if stream is not None:
        raise BufferError("__dlpack__(): pushforward runs on the CPU; stream must be None")
    if dl_device is not None and tuple(dl_device) != (_DLPACK_CPU, 0):
        raise BufferError(f"__dlpack__(): device {dl_device} is not available; pushforward runs on the CPU (1, 0)")
    if self.requires_grad or self._has_tangent():
        # as NumPy conversion: the consumer would get values without their derivative
        raise BufferError(
            "__dlpack__(): the tensor requires grad or carries a tangent, and a DLPack export would drop "
            "its derivative; export tensor.detach() if the values alone are meant"
        )
    a = self.numpy()
    kw = {} if max_version is None else {"max_version": max_version}
    return a.__dlpack__(copy=copy, **kw) if copy is not None else a.__dlpack__(**kw)


def _dlpack_device(self: Tensor, /) -> tuple:
    """(kDLCPU, 0): tensors live in host memory."""
    return (_DLPACK_CPU, 0)


def _to_device(self: Tensor, device_: Any, /, *, stream: Any = None) -> Tensor:
    """self (the CPU is the only device; another is a clear error)."""
    device(device_)
    return self


def floordiv(x1: Any, x2: Any) -> Tensor:
    """x1 // x2 as the Array API standard says: floor division, except that an infinite operand of
    a floating division gives the quotient's limit (inf // 2 is inf, 1 // -inf is -0.0; NumPy's
    floor_divide gives nan and -1 there).

    >>> import pushforward as pf
    >>> pf.tensor([float("inf"), 1.0]) // pf.tensor([2.0, float("-inf")])
    tensor([inf, -0.])
    """
    out = ops.div(x1, x2, rounding_mode="floor")
    if out.dtype.kind != "f":
        return out
    edge = ops.logical_or(_isinf(x1), _isinf(x2))
    return ops.where(edge, ops.div(x1, x2), out)


def _isinf(x: Any) -> Any:
    if not isinstance(x, Tensor):
        return np.isinf(x)
    return ops.logical_not(ops.logical_or(ops.isfinite(x), ops.isnan(x)))


def _shift(op: Callable, name: str) -> Callable:
    # the op, not NumPy on the values: under vmap, compile or a dual level the values are not at hand
    def method(self: Tensor, other: Any) -> Tensor:
        kinds = {np.asarray(v).dtype.kind if not isinstance(v, Tensor) else v.dtype.kind for v in (self, other)}
        if not kinds <= set("iu"):
            raise OpTypeError(f"{name}: integer tensors only, got {self.dtype} and {type(other).__name__} {other!r}")
        return op(self, other)

    method.__name__ = name
    return method


def _reflect(method: Callable) -> Callable:
    def reflected(self: Tensor, other: Any) -> Tensor:
        return method(Tensor(np.asarray(other, dtype=self.dtype)), self)

    return reflected


def _inplace(fn: Callable) -> Callable:
    """`x op= y` as a differentiable write of `x op y` into x (its dtype and shape stay)."""

    def method(self: Tensor, other: Any) -> Tensor:
        return self.copy_(fn(self, other))

    return method


def bind_array_object() -> None:
    """Attach the standard's array-object methods to Tensor."""
    Tensor.__array_namespace__ = _array_namespace
    Tensor.__dlpack__ = _dlpack
    Tensor.__dlpack_device__ = _dlpack_device
    Tensor.to_device = _to_device
    Tensor.__floordiv__ = floordiv
    Tensor.__rfloordiv__ = lambda self, other: floordiv(other, self)
    Tensor.__lshift__ = _shift(ops.bitwise_left_shift, "__lshift__")
    Tensor.__rshift__ = _shift(ops.bitwise_right_shift, "__rshift__")
    Tensor.__rlshift__ = _reflect(Tensor.__lshift__)
    Tensor.__rrshift__ = _reflect(Tensor.__rshift__)
    for name, base in (
        ("__ifloordiv__", "__floordiv__"),
        ("__imod__", "__mod__"),
        ("__iand__", "__and__"),
        ("__ior__", "__or__"),
        ("__ixor__", "__xor__"),
        ("__ilshift__", "__lshift__"),
        ("__irshift__", "__rshift__"),
        ("__imatmul__", "__matmul__"),
    ):
        setattr(Tensor, name, _inplace(getattr(Tensor, base)))
