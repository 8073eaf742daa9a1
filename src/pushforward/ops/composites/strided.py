"""Tensor.as_strided and its derivatives.

The view reads the input's storage (kernels/strided.py). Its derivatives are those of a gather:
each view element reads one element of the input (the tangent is taken there, the gradient
scattered back and summed where the view overlaps itself), or memory outside the input (of its
base), whose derivative with respect to the input is zero. When that base is itself
differentiable (it requires grad or is dual) a derivative would be lost, so that case raises.

>>> import pushforward as pf
>>> pf.arange(4.0).as_strided((2, 2), (1, 1)).tolist()
[[0.0, 1.0], [1.0, 2.0]]
"""

from __future__ import annotations

import math

import numpy as np

from ...core.batched import BatchedTensor
from ...core.tensor import Tensor
from ...engine.tangents import levels_of
from ...errors import OpError, NestingError
from ...kernels.strided import layout_of, storage_of, storage_positions
from .util import const, ops as _ops

__all__ = ["c_as_strided", "as_strided_jvp", "as_strided_backward"]


def _elements(shape, layout, size, stride, storage_offset) -> np.ndarray:
    """Per view element: the (C-order flat) index of the element of the input (of `shape`, laid out
    in its storage as `layout`: strides, offset, storage size) it reads, -1 outside the input."""
    if layout is None:
        raise OpError("_as_strided: differentiating it needs its input's layout (its last argument); call as_strided")
    strides, off, n_storage = layout
    mine = storage_positions(tuple(shape), strides, off).reshape(-1)
    owner = np.full(n_storage, -1, dtype=np.int64)
    owner[mine] = np.arange(mine.size, dtype=np.int64)
    return owner[storage_positions(size, stride, storage_offset)]


def c_as_strided(self, size, stride, storage_offset=None):
    """torch's as_strided: a view of self's storage (storage_offset defaults to self's own)."""
    if type(self) is BatchedTensor:
        return _batched(self, tuple(size), tuple(stride), storage_offset)
    if type(self) is not Tensor:  # (a Taylor series, an interpreted tensor: its rules run the op)
        if storage_offset is None:
            # (jet then runs f by nested dual levels, sparsity detection gives the dense pattern)
            raise NestingError(
                f"as_strided: a {type(self).__name__} has no storage offset of its own; give storage_offset"
            )
        return _ops()._as_strided(self, tuple(size), tuple(stride), int(storage_offset), None)
    if type(self._data) is not np.ndarray:  # (a lazy tensor: the op says why it cannot run)
        return _ops()._as_strided(self, tuple(size), tuple(stride), storage_offset or 0)
    if storage_offset is None:
        storage_offset = storage_of(self._data)[1]
    size, stride = tuple(size), tuple(stride)
    layout = layout_of(self._data)
    base = self._base
    if base is not None and (base._requires_grad or levels_of(base)) and self._data.dtype.kind in "fc":
        if (_elements(self.shape, layout, size, stride, storage_offset) < 0).any():
            if self._fw is None:  # a view of a differentiable base: the view of the base, which it reads
                return _ops()._as_strided(base, size, stride, int(storage_offset), layout_of(base._data))
            raise OpError(
                "as_strided: the view reads memory outside the input tensor (elements of its base, which is "
                "differentiable): their derivative would be lost; call as_strided on the base"
            )
    return _ops()._as_strided(self, size, stride, int(storage_offset), layout)


def _batched(self: BatchedTensor, size: tuple, stride: tuple, storage_offset) -> BatchedTensor:
    """as_strided inside vmap (torch's rule): each batch element's memory is its own storage, and a
    view reaching outside it is an error; one view of the batch's (contiguous) memory."""
    phys = self._phys
    if type(phys) is BatchedTensor:
        raise OpError("as_strided: nested vmap levels are not supported")
    n = self.numel()
    off = 0 if storage_offset is None else int(storage_offset)
    if math.prod(size) and off + sum((k - 1) * s for k, s in zip(size, stride)) >= n:
        raise OpError(
            f"as_strided: vmap: the view (sizes {list(size)}, strides {list(stride)}, storage offset {off}) "
            f"can access memory outside of `tensor` (a batch element has {n} elements)"
        )
    if not phys._data.flags.c_contiguous:
        phys = _ops().clone(phys)  # (each batch element's memory one block)
    out = c_as_strided(phys, (phys.shape[0],) + size, (n,) + stride, storage_of(phys._data)[1] + off)
    return BatchedTensor(out, self._blevel)


def _same_layout(a, b) -> bool:
    """Do two arrays lay their elements out the same way in memories of the same size?"""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.strides != b.strides or a.dtype != b.dtype:
        return False
    (fa, oa), (fb, ob) = storage_of(a), storage_of(b)
    return oa == ob and fa.size == fb.size


def as_strided_jvp(self_t, self_p, layout, size, stride, storage_offset):
    if layout is None and type(self_p) is Tensor and type(self_p._data) is np.ndarray:
        layout = layout_of(self_p._data)  # (called without it: a Taylor coefficient's)
    if type(self_t) is Tensor and _same_layout(self_t._data, self_p._data):
        # the tangent's memory mirrors the primal's: the same view of it (a view, as torch's)
        return _ops()._as_strided(self_t, size, stride, storage_offset, layout)
    idx = _elements(self_p.shape, layout, size, stride, storage_offset)
    if (idx < 0).any():
        raise OpError(
            "as_strided: the view reads memory outside the input tensor, and the input's tangent is not laid out "
            "like its primal, so its tangent there is unknown; call as_strided on the tensor covering that memory"
        )
    return _ops().take(self_t, const(idx))


def as_strided_backward(grad, shape, layout, size, stride, storage_offset):
    idx = _elements(shape, layout, size, stride, storage_offset).reshape(-1)
    inside = np.flatnonzero(idx >= 0)
    g = grad.reshape(-1)
    if inside.size != idx.size:
        g = _ops().index(g, const(inside))
    out = _ops().zeros(int(np.prod(shape)), dtype=grad.dtype)
    return _ops().index_add(out, 0, const(idx[inside]), g).reshape(tuple(shape))
