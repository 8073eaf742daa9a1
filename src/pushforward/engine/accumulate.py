"""Summing gradients in the backward engine, with view gradients added in place.

The gradient of a view (``x[1:]``, ``narrow``, ``select``, ``diagonal``) is the incoming
gradient placed into zeros of the base's shape. Done literally, ``x[1:] - x[:-1]`` costs two
zero-filled arrays of x's size, two writes and a full-size sum. Without create_graph (nothing
differentiates the gradients), the engine instead keeps a view's gradient as an `Embed`
(the small gradient and where it goes) and sums gradients into a buffer it owns (`Acc`), so
each further view gradient is one addition over the view's own elements. A dense gradient
that nothing but the engine references (a backward formula's fresh result) becomes such a
buffer without a copy (`exclusive`, by reference counts), so summing the gradients of an input
used k times costs k - 1 in-place additions and no new memory: at large sizes fresh memory is
what costs (each array of 512 KB or more is page-faulted anew under glibc's allocator).
Tangents (forward-over-reverse) are summed alongside, for gradients with at most one level's
tangent; anything else takes the ordinary out-of-place sum.

>>> import pushforward as pf
>>> x = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x[1:] * x[:-1]).sum().backward()
>>> x.grad
tensor([2., 4., 2.])
"""

from __future__ import annotations

import sys

import numpy as np

from .tangents import set_tangent
from .registry import OPS
from ..kernels.basic import write_region
from ..core.backend import zeros_for
from ..core.lazy import is_immutable
from ..core.tensor import Tensor, mark_ad, wrap
from ..core.batched import BatchedTensor

__all__ = ["Embed", "Acc", "simple_tangent", "embed_or_none", "dense", "add"]


class Embed:
    """`grad` placed where the view `steps` looks into zeros of `shape` (not materialised).
    `tangent` is simple_tangent(grad), worked out once."""

    __slots__ = ("grad", "shape", "steps", "tangent")

    def __init__(self, grad: Tensor, shape: tuple, steps: tuple) -> None:
        self.grad = grad
        self.shape = shape
        self.steps = steps
        self.tangent = simple_tangent(grad)


class Acc:
    """A gradient buffer the engine allocated itself (so it may add into it in place):
    the primal array and the tangent array at level `key` (None: no tangent yet)."""

    __slots__ = ("data", "key", "tan")

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.key = None
        self.tan = None


def simple_tangent(g: Tensor):
    """(key, tangent array) of g's only tangent, (None, None) without one, or False when g is
    not simple enough to be summed on arrays (several levels, a tangent that is itself
    differentiable or deferred, a view inheriting its base's tangent, a gradient requiring grad)."""
    if g._requires_grad or g._st.dual:
        return False
    fw = g._fw
    if not fw:
        return None, None
    if len(fw) != 1:
        return False
    ((key, t),) = fw.items()
    if type(t) is not Tensor or t._ad:
        return False
    return key, t._data


def embed_or_none(grad, shape: tuple, dtype, steps: tuple) -> Embed | None:
    """An Embed for a view op's gradient, or None when the engine must run the formula."""
    if type(grad) is not Tensor or grad._data.dtype != dtype:
        return None
    e = Embed(grad, shape, steps)
    return None if e.tangent is False else e


def dense(g):
    """A Tensor for an engine buffer entry (Embed, Acc or already a Tensor)."""
    tg = type(g)
    if tg is Embed:
        return OPS._view_embed(g.grad, g.shape, g.steps)
    if tg is Acc:
        out = wrap(g.data)
        if g.tan is not None:
            set_tangent(out, g.key, wrap(g.tan))
        return out
    return g


def add(lst: list, k: int, new):
    """lst[k] + new for two gradients of the same input (either may be an Embed or an Acc), summed
    in place into lst[k] when the engine owns its memory; lst[k] must be referenced by nothing but
    `lst` (the engine drops its own references first, see `exclusive`)."""
    small = _small_sum(lst[k], new)
    if small is not None:
        return small
    if type(lst[k]) is BatchedTensor or type(new) is BatchedTensor:  # batched cotangents: by the ops
        return dense(lst[k]) + dense(new)
    if _immutable(lst[k]) or _immutable(new):  # (Dask arrays): summed out of place
        return dense(lst[k]) + dense(new)
    if type(new) is Acc:
        new = dense(new)
    to = type(lst[k])
    if to is not Acc:
        if to is Embed:
            old = _acc_of_embed(lst[k])
        elif to is Tensor and type(new) in (Tensor, Embed) and simple_tangent(lst[k]) is not False:
            old = _adopt(lst, k)
        else:
            old = lst[k]
            return dense(old) + dense(new)
    else:
        old = lst[k]
    if type(new) is Embed:
        return old if _add_embed(old, new) else dense(old) + dense(new)
    return old if _add_dense(old, new) else dense(old) + new


def _immutable(g) -> bool:
    """A gradient (Tensor, Embed or Acc) whose array no write can change (core.lazy.is_immutable)."""
    d = g.grad._data if type(g) is Embed else g.data if type(g) is Acc else getattr(g, "_data", None)
    return is_immutable(d)


_IN_PLACE_BYTES = 1 << 16  # below this a fresh sum costs less than finding out whether it may be in place


def _small_sum(old, new):
    """old + new on arrays for two small Tensors without tangents of one shape and dtype, else None."""
    if type(old) is Tensor and type(new) is Tensor and old._fw is None and new._fw is None:
        a = old._data
        b = new._data
        if (
            a.nbytes < _IN_PLACE_BYTES
            and a.shape == b.shape
            and a.dtype == b.dtype
            and not old._st.dual
            and not new._st.dual
        ):
            return wrap(a + b)
    return None


def _adopt(lst: list, k: int) -> Acc:
    """An Acc for the Tensor lst[k] (with at most one simple tangent): its own arrays when nothing
    else references them, else copies."""
    own = exclusive(lst, k, tangents=True)
    g = lst[k]
    key, t = simple_tangent(g)
    acc = Acc(g._data if own else g._data.copy(order="K"))  # (a method: compiler/recording.py sees it)
    if t is not None:
        acc.key = key
        acc.tan = t if own else t.copy(order="K")
    return acc


# -- exclusive ownership, by reference counts ---------------------------------------------------


def _ref_counts(lst: list, i: int) -> tuple:
    """Reference counts of lst[i] (a Tensor), of its array and of the array's base (0: none)."""
    t = lst[i]
    a = t._data
    b = a.base
    return sys.getrefcount(t), sys.getrefcount(a), (0 if b is None else sys.getrefcount(b))


def _tangent_counts(fw: dict) -> tuple:
    """Reference counts of the only tangent in fw (a Tensor), of its array and of the array's base."""
    for t in fw.values():
        a = t._data
        b = a.base
        return sys.getrefcount(t), sys.getrefcount(a), (0 if b is None else sys.getrefcount(b))


def _calibrate() -> tuple:
    """The counts _ref_counts and _tangent_counts give for a Tensor and array that nothing else
    references (measured, not assumed: the interpreter's own references differ between versions)."""
    lst = [_calibration_tensor()]  # the list is the tensor's only holder
    lst[0]._fw = {0: _calibration_tensor()}  # and the dict the tangent's
    mark_ad(lst[0])
    return _ref_counts(lst, 0), _tangent_counts(lst[0]._fw)


def _calibration_tensor() -> Tensor:
    t = object.__new__(Tensor)
    t._data = np.zeros(4).reshape(2, 2)  # a view whose base only the view references
    return t


_OWNED, _OWNED_TANGENT = _calibrate()


def _private_array(a: np.ndarray) -> bool:
    """a may be written into: writeable, contiguous, and its memory (if a view) a whole base array.
    (A Dask array is never written into: whoever holds it may keep it.)"""
    if not isinstance(a, np.ndarray):  # (pf.compile's tracer passes an ndarray subclass: as eagerly)
        return is_immutable(a)
    if not a.flags.writeable or not (a.flags.c_contiguous or a.flags.f_contiguous):
        return False
    b = a.base
    return b is None or (isinstance(b, np.ndarray) and b.base is None and b.nbytes == a.nbytes)


def _within(counts: tuple, owned: tuple) -> bool:
    ct, ca, cb = counts
    return ct <= owned[0] and ca <= owned[1] and (cb == 0 or cb <= owned[2])


def exclusive(lst: list, i: int, tangents: bool = False) -> bool:
    """True if lst[i] (a gradient) and its memory are referenced by nothing but `lst`, so it may be
    written into or become a `.grad` without a copy: not the user's grad_output, not another leaf's
    or a retained gradient, not a broadcast or partial view. Tangents: without `tangents` none is
    allowed (tape_free would share them); with it, one, itself held by nothing else."""
    t = lst[i]
    if t._requires_grad or t._st.dual or t._base is not None or not _private_array(t._data):
        return False
    if type(t._data) is not np.ndarray and is_immutable(t._data):  # (a Dask array: holding it is never a hazard)
        return t._fw is None
    fw = t._fw
    if fw is not None:
        if not tangents or len(fw) != 1:
            return False
        tan = next(iter(fw.values()))
        if type(tan) is not Tensor or tan._ad or tan._base is not None or not _private_array(tan._data):
            return False
        tan = None
        if not _within(_tangent_counts(fw), _OWNED_TANGENT):
            return False
    del t, fw
    return _within(_ref_counts(lst, i), _OWNED)


def _acc_of_embed(e: Embed) -> Acc:
    acc = Acc(zeros_for(e.grad._data, e.shape))
    _add_embed(acc, e)  # always fits: same dtype, no tangent yet (a tangent has its primal's dtype)
    return acc


def _tangent_fits(acc: Acc, key, t) -> bool:
    """Can tangent array t (of level `key`, None: no tangent) be summed into acc's in place?"""
    return t is None or (t.dtype == acc.data.dtype and (acc.tan is None or acc.key == key))


def _tangent_into(acc: Acc, key, t, steps) -> None:
    """Add tangent t into acc's tangent, into the region the view chain `steps` selects (None: all)."""
    if t is None:
        return
    if acc.tan is None:
        acc.key = key
        # through t: under pf.compile a buffer made by np.zeros is one the tracer cannot follow,
        # so what is later read from it (the negated gradient of a sub) would be a constant
        acc.tan = zeros_for(t, acc.data.shape, acc.data.dtype)
    if steps is None:
        np.add(acc.tan, t, out=acc.tan)
    else:
        write_region(acc.tan, t, steps, add=True)


def _add_embed(acc: Acc, e: Embed) -> bool:
    """Add e into acc in place; False (acc untouched) when that is not possible."""
    g = e.grad
    key, t = e.tangent
    if g._data.dtype != acc.data.dtype or not _tangent_fits(acc, key, t):
        return False
    write_region(acc.data, g._data, e.steps, add=True)
    _tangent_into(acc, key, t, e.steps)
    return True


def _add_dense(acc: Acc, g: Tensor) -> bool:
    """Add g into acc in place; False (acc untouched) when that is not possible."""
    st = simple_tangent(g)
    if st is False or g._data.shape != acc.data.shape or g._data.dtype != acc.data.dtype or not _tangent_fits(acc, *st):
        return False
    key, t = st
    np.add(acc.data, g._data, out=acc.data)
    _tangent_into(acc, key, t, None)
    return True
