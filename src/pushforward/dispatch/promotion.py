"""Promotion: an in-place write of a batched value into a tensor made inside the vmapped function.

torch's vmap refuses `buf.sub_(x)` when `buf` is not batched and `x` is. Here more values are
batched than in torch: under vmap, a reverse transform's inputs are batched (its tape is recorded
on the physical tensors, one gradient per batch element) and so is a dual whose tangent alone
varies across the batch. So that `vmap(grad(f))` computes wherever torch.func does, a tensor that
shares memory with nothing and carries no derivative (a fresh `zeros`, `tensor`, a result) becomes
batched at the write: its value repeated along the batch, then written. The object itself is
turned into a BatchedTensor, as every name of it must see the write.

That is only right for a tensor the vmapped function made. One it closed over (made outside) must
not change kind behind its owner's back; torch refuses that write. No creation counter tells the
two apart on the hot path, so the check is made when the vmap ends (`settle_promotions`): once the
function's frame is gone and its results are unwrapped into physical tensors, a promoted tensor
still alive is referenced from outside, so it was made there. It is restored (kind and value) and
the write refused. docs/design.md, "Deviations".

>>> import pushforward as pf
>>> def f(x):
...     buf = pf.zeros(2)
...     buf.sub_(x)
...     return (buf * buf).sum()
>>> pf.func.vmap(pf.func.grad(f))(pf.tensor([[1.0, 2.0], [3.0, 4.0]]))
tensor([[2., 4.],
        [6., 8.]])
"""

from __future__ import annotations

import weakref

import numpy as np

from ..core.batched import BatchedTensor
from ..core.creation import from_numpy
from ..core.tensor import Tensor
from ..errors import OpError
from ..engine.saved import before_write

__all__ = ["open_promotions", "promote", "settle_promotions", "vmap_running"]

# batch level of a running vmap -> [(weak reference to a promoted tensor, its state before)]
_PROMOTED: dict = {}


def open_promotions(level: int) -> None:
    """The vmap of batch level `level` starts: writes at that level may promote tensors."""
    _PROMOTED[level] = []


def vmap_running() -> bool:
    """Is a vmap running (its function being called)?"""
    return bool(_PROMOTED)


def promote(target: Tensor, level: int, size: int) -> bool:
    """Make `target` batched at `level` (its value repeated `size` times) if it may be; False if
    not: no vmap of that level is running (a batched dual level), or the tensor shares memory or
    carries a derivative."""
    promoted = _PROMOTED.get(level)
    if (
        promoted is None
        or type(target) is not Tensor
        or target._ad
        or not _alone(target)
        or not isinstance(target._data, np.ndarray)  # (a Dask array is not; pf.compile's recording one is)
    ):
        return False
    st = before_write(target)  # (a tape node that kept the tensor keeps its value)
    state = dict(target.__dict__)
    phys = from_numpy(np.repeat(target._data[None], size, axis=0))
    target.__dict__.clear()
    target.__class__ = BatchedTensor
    target._phys = phys
    target._blevel = level
    target._st = st
    st.version += 1
    promoted.append((weakref.ref(target), state))
    return True


def _alone(t: Tensor) -> bool:
    """Does t share memory with no other live tensor (it is no view, has no view or alias)? Its
    storage may exist for its version counter alone."""
    if t._base is not None:
        return False
    st = t._st
    if not st.shared:
        return True
    return all(r() is None or r() is t for r in st.members) and not any(r() is not None for r in st.views or ())


def settle_promotions(level: int, failed: bool = False) -> None:
    """The vmap of `level` ends, its results unwrapped into physical tensors and its own references
    dropped. A promoted tensor still alive was made outside the function: it is restored, and the
    write refused (`failed`: the function raised; every promoted tensor is restored quietly)."""
    outside = []
    for ref, state in _PROMOTED.pop(level, []):
        t = ref()
        if t is None:
            continue
        t.__class__ = Tensor
        t.__dict__.clear()
        t.__dict__.update(state)
        outside.append(tuple(t.shape))
    if outside and not failed:
        raise OpError(
            f"vmap: an in-place operation wrote a batched value into a tensor made outside the vmapped "
            f"function (shape {outside[0]}), which is not batched; it is left unchanged. Write into a "
            "tensor made inside the function, or out of place"
        )
