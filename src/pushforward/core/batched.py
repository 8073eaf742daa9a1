"""BatchedTensor: one logical tensor standing for B tensors of the same shape (vmap, batched tangents).

The B values live in a *physical* tensor `_phys` whose dim 0 is the batch; the logical shape is
the rest. A batch level is a number from `new_batch_level()` (larger: entered later, inner);
a physical tensor may itself be batched at an outer level, so nested vmaps nest wrappers, the
innermost level outermost. Ops on BatchedTensors run by their batching rules (batching.py) on
the physical tensors, so whatever autodiff state the physical tensors carry (a tape, tangents of
levels opened outside the vmap) follows. A BatchedTensor itself carries no autodiff state.

>>> import pushforward as pf
>>> x = pf.func.vmap(lambda v: v.sum())(pf.ones(3, 2))
>>> x
tensor([2., 2., 2.])
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from ..errors import OpError
from .lazy import has_layout
from .tensor import Size, Tensor

__all__ = [
    "physical_in",
    "batched_in",
    "BatchedTensor",
    "new_batch_level",
    "values_of",
    "readable",
    "unbatched",
    "batch_into",
    "broadcast_batch",
    "physical",
]

_levels = itertools.count(1)


def new_batch_level() -> int:
    """A fresh batch level id, larger than every earlier one."""
    return next(_levels)


def unbatched(t):
    """t's physical tensor through every batch level (t itself when it is not batched)."""
    while type(t) is BatchedTensor:
        t = t._phys
    return t


def values_of(t: Tensor) -> np.ndarray:
    """The array of t's values; for a batched tensor, every batch element's (its physical array
    through all batch levels). For checks over all values (is it all zero?), never per element."""
    return unbatched(t)._data


def readable(t: Tensor) -> bool:
    """Can `values_of(t)` read t's values (a plain tensor, or a batch of them)? An interpreted
    tensor (a Taylor series, a sparsity pattern) has none to give."""
    return type(unbatched(t)) is Tensor


def broadcast_batch(x: Tensor, size: int, dim: int = 0) -> Tensor:
    """x repeated `size` times along a new dim `dim` (an expanded view, no copy): the physical form of
    a value that does not vary across a batch."""
    shape = tuple(x.shape)
    return x.unsqueeze(dim).expand(shape[:dim] + (size,) + shape[dim:])


def physical(x: Tensor, level: int, size: int) -> Tensor:
    """x as the (size, ...) tensor of batch level `level`: its physical tensor when it is batched
    there, else x repeated along a new dim 0 (a value equal across the batch)."""
    if type(x) is BatchedTensor and x._blevel == level:
        return x._phys
    return broadcast_batch(x, size)


def batch_into(x: Tensor, level: int) -> Tensor:
    """x, computed on the physical tensors of batch level `level` (its logical dim 0 is that batch),
    as a tensor batched at `level`. If x is itself batched at inner levels (a transform inside the
    vmap, e.g. jacrev's batched cotangents), those stay the outer wrappers: the innermost level is
    always the outermost wrapper, as the batching rules unwrap them."""
    if type(x) is BatchedTensor and x._blevel > level:
        return BatchedTensor(batch_into(x._phys.movedim(1, 0), level), x._blevel)
    return BatchedTensor(x, level)


def physical_in(x: Tensor, vmapped: list) -> Tensor:
    """x as the tape sees it inside the vmaps `vmapped` ((level, size), outermost first): its physical
    tensor through every level (the innermost level is the outermost wrapper, so it goes first)."""
    for level, size in reversed(vmapped):
        x = physical(x, level, size)
    return x


def batched_in(x: Tensor, vmapped: list) -> Tensor:
    """The inverse of physical_in: a tensor computed on the physical tensors, batched again."""
    for level, _ in vmapped:
        x = batch_into(x, level)
    return x


class BatchedTensor(Tensor):
    """B tensors of one shape as one logical tensor (see the module docstring).

    Code that reads the array of a tensor directly (`_data`) cannot handle a batched one: it gets
    an error naming the problem rather than a silently wrong array.
    """

    _ad = True  # never a bare array: the dispatcher's fast paths leave it to the batching rules

    def __init__(self, phys: Tensor, level: int) -> None:  # noqa: D107 - see class docstring
        self._phys = phys
        self._blevel = level

    @property
    def _data(self):
        where = sys._getframe(1).f_code.co_name  # the function to give a batching rule (or values_of)
        raise OpError(
            f"{where}: this operation does not support batched tensors yet (inside vmap or a batched "
            "dual level): it reads a tensor's array directly"
        )

    # -- logical metadata ----------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._phys.shape[1:])

    @property
    def dtype(self) -> np.dtype:
        return self._phys.dtype

    @property
    def ndim(self) -> int:
        return self._phys.ndim - 1

    @property
    def itemsize(self) -> int:
        return self._phys.itemsize

    @property
    def size(self) -> Size:
        """The element count, callable as torch's size() / size(dim) (docs/design.md, "x.size")."""
        return Size(self.shape)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def element_size(self) -> int:
        return self._phys.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    def is_contiguous(self) -> bool:
        """Per example, as the loop vmap stands for: is each element's memory C-contiguous?"""
        t, k = self, 0
        while type(t) is BatchedTensor:  # nested levels: their batch dims lead the physical array
            t, k = t._phys, k + 1
        d = t._data
        if not has_layout(d):  # (a Dask array: chunks)
            return True
        return bool(d.flags.c_contiguous or (d.size and d[(0,) * k].flags.c_contiguous))

    def __len__(self) -> int:
        if self.ndim == 0:
            raise OpError("len() of a 0-d tensor")
        return self.shape[0]

    # -- values: not available per element inside vmap ---------------------------------------
    def _no_value(self, what: str):
        raise OpError(
            f"{what} of a batched tensor (inside vmap or a batched dual level): its value differs "
            "across the batch; data-dependent Python control flow is not supported under vmap"
        )

    def item(self):
        self._no_value("item()")

    def tolist(self):
        self._no_value("tolist()")

    def numpy(self, *, force: bool = False):
        self._no_value("numpy()")

    def __bool__(self) -> bool:
        self._no_value("bool()")

    def __float__(self) -> float:
        self._no_value("float()")

    def __int__(self) -> int:
        self._no_value("int()")

    def __complex__(self) -> complex:
        self._no_value("complex()")

    def __index__(self) -> int:
        self._no_value("an index")

    def __array__(self, dtype=None, copy=None):
        self._no_value("conversion to a NumPy array")

    def __repr__(self) -> str:
        return f"BatchedTensor(level={self._blevel}, batch={self._phys.shape[0]}, value={self._phys!r})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    # -- autodiff state lives on the physical tensor ------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._phys.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "BatchedTensor":
        raise OpError(
            "requires_grad_() on a batched tensor (inside vmap) is not supported; use "
            "pushforward.func.grad / vjp inside vmap, or vmap over a function that calls them"
        )

    @property
    def grad_fn(self):
        return None

    def backward(self, *a, **k) -> None:
        raise OpError(
            "backward() of a batched tensor (inside vmap) is not supported; use pushforward.func.grad "
            "or vjp inside vmap"
        )

    def detach(self) -> "BatchedTensor":
        return BatchedTensor(self._phys.detach(), self._blevel)

    def contiguous(self) -> "BatchedTensor":
        # As the loop: self (an alias, which later in-place writes show through) when each example
        # is contiguous, though the physical tensor may not be (a narrowed or indexed batch).
        return self if self.is_contiguous() else BatchedTensor(self._phys.contiguous(), self._blevel)
