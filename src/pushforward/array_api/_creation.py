"""The standard's creation functions: NumPy's (pushforward.numpy's, which make tensors), checked by
`strict` (the standard's dtypes, our device); local are asarray's copy semantics (copy=False
never copies, or raises), from_dlpack and meshgrid's list.

>>> import pushforward.array_api as xp
>>> xp.full((2,), 3), xp.eye(2, k=1, dtype=xp.int8)[0]
(tensor([3, 3]), tensor([0, 1], dtype=pushforward.int8))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as pnp
from ..core.creation import as_tensor
from ..core.tensor import Tensor, device as _device
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._common import dtype_of, strict

SAME = {
    n: strict(n, getattr(pnp, n), arrays=0) for n in ("arange", "empty", "eye", "full", "linspace", "ones", "zeros")
}
SAME |= {n: strict(n, getattr(pnp, n)) for n in ("empty_like", "full_like", "ones_like", "zeros_like", "tril", "triu")}
globals().update(SAME)

__all__ = [*SAME, "asarray", "from_dlpack", "meshgrid"]


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Tensor:
    """obj as an array: copy=None copies only if needed, True always, False never (error if it must).

    >>> import pushforward.array_api as xp
    >>> x = xp.asarray([1.0, 2.0]); xp.asarray(x) is x
    True
    """
    if device is not None:
        _device(device)  # the CPU, or a clear error
    dt = None if dtype is None else dtype_of("asarray", dtype)
    if isinstance(obj, Tensor):
        if dt is None or dt == obj.dtype:
            return ops.clone(obj) if copy else obj
        if copy is False:
            raise OpValueError(f"array_api.asarray(): casting {obj.dtype} to {dt} needs a copy, and copy=False")
        return ops.to(obj, dt, copy=True)
    if copy is False and not _shares_buffer(obj):
        raise OpValueError(f"array_api.asarray(): a {type(obj).__name__} cannot be used without a copy (copy=False)")
    # NumPy's asarray (a list holding tensors is stacked by our ops: derivatives flow into it)
    out = pnp.asarray(obj, dtype=dt)
    shared = _shares_buffer(obj) and np.shares_memory(out._data, np.asarray(obj))
    if copy is False and not shared:
        raise OpValueError(f"array_api.asarray(): converting to {out.dtype} needs a copy, and copy=False")
    # copy=None copies a buffer NumPy's asarray would share, unless it is an ndarray's
    return ops.clone(out) if copy or (copy is None and shared and not isinstance(obj, np.ndarray)) else out


def _shares_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return isinstance(obj, np.ndarray)
    return True


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """An array from any object with __dlpack__ (a NumPy array, a pushforward or torch tensor...).

    >>> import numpy as np, pushforward.array_api as xp
    >>> xp.from_dlpack(np.arange(3.0))
    tensor([0., 1., 2.])
    """
    if device is not None:
        _device(device)
    if isinstance(x, Tensor):
        return ops.clone(x) if copy else x
    if not hasattr(x, "__dlpack__"):
        raise OpTypeError(f"array_api.from_dlpack(): {type(x).__name__} has no __dlpack__ method")
    a = np.from_dlpack(x, copy=copy)
    return as_tensor(a)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list:
    """Coordinate matrices from coordinate vectors (NumPy's; a list, where NumPy's is a tuple).

    >>> import pushforward.array_api as xp
    >>> [g.shape for g in xp.meshgrid(xp.arange(2), xp.arange(3))]
    [(3, 2), (3, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise OpValueError(f"array_api.meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    return list(pnp.meshgrid(*arrays, indexing=indexing)) if arrays else []
