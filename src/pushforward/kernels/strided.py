"""as_strided on NumPy arrays: a view of the memory an array views, by sizes, strides and offset.

torch's storage is the memory block under a tensor; here it is the NumPy buffer that owns the
array's memory (followed through `.base`), read in its memory order, in the array's dtype.

>>> import numpy as np
>>> a = np.arange(6.0)[1:4]
>>> as_strided(a, (2, 2), (1, 1), 0).tolist()
[[0.0, 1.0], [1.0, 2.0]]
>>> storage_of(a)[1]
1
"""

from __future__ import annotations

import math

import numpy as np

from ..core.backend import xp
from ..errors import OpError

__all__ = ["storage_of", "storage_positions", "layout_of", "as_strided"]


def storage_of(a) -> tuple:
    """(flat storage, element offset of a's first element in it)."""
    if type(a) is not np.ndarray:
        raise OpError(f"as_strided: needs an array in memory, got {type(a).__name__} (a lazy tensor: compute it first)")
    buf = a
    while True:  # (np.lib.stride_tricks.as_strided's results hold their base through a DummyArray)
        b = buf.base
        b = b if isinstance(b, np.ndarray) else getattr(b, "base", None)
        if not isinstance(b, np.ndarray):
            break
        buf = b
    if not (buf.flags.c_contiguous or buf.flags.f_contiguous):
        raise OpError("as_strided: the tensor's memory is not one dense block; call .contiguous() first")
    flat = buf.reshape(-1, order="A")
    if flat.dtype != a.dtype:
        if (flat.size * flat.itemsize) % a.itemsize:
            raise OpError(f"as_strided: the tensor ({a.dtype}) views memory of dtype {flat.dtype}; call .clone() first")
        flat = flat.view(a.dtype)
    off = (a.__array_interface__["data"][0] - flat.__array_interface__["data"][0]) // a.itemsize
    return flat, int(off)


def storage_positions(shape, strides, offset: int):
    """The storage index of every element of a (shape, strides in elements, offset) view."""
    pos = xp.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        step = xp.arange(n, dtype=np.int64) * s
        pos = pos + step.reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


def _checked(size, stride, storage_offset, n_storage: int) -> tuple:
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise OpError(
            f"as_strided: mismatch in length of strides and shape: sizes {list(size)}, strides {list(stride)}"
        )
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or storage_offset < 0:
        raise OpError(
            f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset {storage_offset} "
            "must be non-negative"
        )
    if math.prod(size):
        need = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if need > n_storage:
            raise OpError(
                f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset {storage_offset} "
                f"need a storage of {need} elements, out of bounds for the tensor's storage of {n_storage} elements"
            )
    return size, stride


def layout_of(a) -> tuple:
    """(strides in elements, offset, storage size) of a in its storage: what as_strided's
    derivatives need of their input (its values are not kept)."""
    flat, off = storage_of(a)
    return tuple(s // a.itemsize for s in a.strides), off, flat.size


def as_strided(a, size, stride, storage_offset, layout=None):
    """The view of a's storage with `size`, `stride` (in elements) and `storage_offset`."""
    flat, _ = storage_of(a)
    size, stride = _checked(size, stride, int(storage_offset), flat.size)
    if not math.prod(size):
        return flat[:0].reshape(size)
    start = flat[int(storage_offset) :]
    return np.lib.stride_tricks.as_strided(start, size, tuple(s * a.itemsize for s in stride))
