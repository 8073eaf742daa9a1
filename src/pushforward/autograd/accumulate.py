"""Summing gradients in the backward engine, with view gradients added in place.

The gradient of a view (``x[1:]``, ``narrow``, ``select``, ``diagonal``) is the incoming
gradient placed into zeros of the base's shape. Done literally, ``x[1:] - x[:-1]`` costs two
zero-filled arrays of x's size, two writes and a full-size sum. Without create_graph (nothing
differentiates the gradients), the engine instead keeps a view's gradient as an `Embed`
(the small gradient and where it goes) and sums gradients into a buffer it owns (`Acc`), so
each further view gradient is one addition over the view's own elements. Tangents
(forward-over-reverse) are summed alongside, for gradients with at most one level's tangent;
anything else takes the ordinary out-of-place sum.

>>> import pushforward as pf
>>> x = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x[1:] * x[:-1]).sum().backward()
>>> x.grad
tensor([2., 4., 2.])
"""
from __future__ import annotations

import numpy as np

from .forward_ad import set_tangent
from .registry import OPS
from ..kernels import view_region
from .._tensor import Tensor, wrap

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
    (key, t), = fw.items()
    if type(t) is not Tensor or t._requires_grad or t._fw is not None or t._st.dual:
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


def add(old, new):
    """old + new for two gradients of the same input (either may be an Embed or an Acc)."""
    if type(new) is Acc:
        new = dense(new)
    if type(old) is not Acc:
        if type(old) is Embed:
            old = _acc_of_embed(old)
        elif type(new) is Embed and simple_tangent(old) is not False:
            old = _acc_copy(old)
        else:
            return dense(old) + dense(new)
    if type(new) is Embed:
        return old if _add_embed(old, new) else dense(old) + dense(new)
    return old if _add_dense(old, new) else dense(old) + new


def _acc_of_embed(e: Embed) -> Acc:
    acc = Acc(np.zeros(e.shape, dtype=e.grad._data.dtype))
    _add_embed(acc, e)  # always fits: same dtype, no tangent yet (a tangent has its primal's dtype)
    return acc


def _acc_copy(g: Tensor) -> Acc:
    acc = Acc(np.array(g._data, copy=True))
    key, t = simple_tangent(g)
    if t is not None:
        acc.key = key
        acc.tan = np.array(t, copy=True)
    return acc


def _tangent_fits(acc: Acc, key, t) -> bool:
    """Can tangent array t (of level `key`, None: no tangent) be summed into acc's in place?"""
    return t is None or (t.dtype == acc.data.dtype and (acc.tan is None or acc.key == key))


def _tangent_into(acc: Acc, key, t, region) -> None:
    if t is None:
        return
    if acc.tan is None:
        acc.key = key
        acc.tan = np.zeros(acc.data.shape, dtype=acc.data.dtype)
    dst = region(acc.tan)
    np.add(dst, t, out=dst)


def _add_embed(acc: Acc, e: Embed) -> bool:
    """Add e into acc in place; False (acc untouched) when that is not possible."""
    g = e.grad
    key, t = e.tangent
    if g._data.dtype != acc.data.dtype or not _tangent_fits(acc, key, t):
        return False
    dst = view_region(acc.data, e.steps)
    np.add(dst, g._data, out=dst)
    _tangent_into(acc, key, t, lambda a: view_region(a, e.steps))
    return True


def _add_dense(acc: Acc, g: Tensor) -> bool:
    """Add g into acc in place; False (acc untouched) when that is not possible."""
    st = simple_tangent(g)
    if st is False or g._data.shape != acc.data.shape or g._data.dtype != acc.data.dtype \
            or not _tangent_fits(acc, *st):
        return False
    key, t = st
    np.add(acc.data, g._data, out=acc.data)
    _tangent_into(acc, key, t, lambda a: a)
    return True
