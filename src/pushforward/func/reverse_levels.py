"""Which reverse transform a leaf belongs to: how a nested ``grad`` tells its perturbation from an
outer one (docs/design.md, "Nested transforms").

Every run of a reverse transform (``grad``, ``vjp``, ``jacrev``, ...) is a *reverse level* with a
unique id, pushed while its function runs. The leaves it makes for itself (the gradient is taken
with respect to them) are claimed by that level. When the function returns, the transform asks
whether its tape reaches a leaf of somebody else: a user's tensor that requires grad, or a leaf
of an enclosing reverse level still running. Then an enclosing transform will differentiate the
result, so its backward pass must be recorded (``create_graph``). A leaf of a level that has
already finished (a transform nested inside, whose gradient was taken) is nobody's any more: no
one will ask for a gradient with respect to it.

>>> import pushforward as pf
>>> with reverse_level() as uid:
...     leaf = claim(pf.tensor(1.0).requires_grad_(), uid)
...     belongs_elsewhere(leaf, uid)
False
>>> belongs_elsewhere(pf.tensor(1.0, requires_grad=True), uid)
True
"""

from __future__ import annotations

import itertools
import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

from ..core.tensor import Tensor, _autodiff
from ..engine.state import STATE
from .vmapping import ACTIVE as VMAP_ACTIVE

__all__ = ["reverse_level", "claim", "belongs_elsewhere", "transform_running"]

_uids = itertools.count(1)
# id(leaf) -> (weak reference to the leaf, the uid of the level that made it)
_OWNER: dict[int, tuple[weakref.ref, int]] = {}
_local = threading.local()


def _active() -> list[int]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextmanager
def reverse_level() -> Iterator[int]:
    """A new reverse level, active (enclosing whatever runs inside) until the block ends."""
    uid = next(_uids)
    stack = _active()
    stack.append(uid)
    try:
        yield uid
    finally:
        stack.remove(uid)


def claim(leaf: Tensor, uid: int) -> Tensor:
    """Mark `leaf` as made by the reverse level `uid` for its own gradient; returns it."""
    key = id(leaf)
    _OWNER[key] = (weakref.ref(leaf, lambda _r, key=key: _OWNER.pop(key, None)), uid)
    return leaf


def belongs_elsewhere(leaf: Tensor | None, uid: int) -> bool:
    """Could a transform other than level `uid` want a gradient with respect to `leaf`?

    Yes for a leaf no reverse level made (the user's) and for one made by a level still running
    around `uid`; no for `uid`'s own leaves and for those of levels that have finished."""
    if leaf is None:  # (a leaf that has died: nobody can ask for a gradient with respect to it)
        return False
    owner = _OWNER.get(id(leaf))
    if owner is None or owner[0]() is not leaf:
        return True
    return owner[1] != uid and owner[1] in _active()


# core's float() refuses a value a reverse transform traces (core cannot import this layer)
_autodiff.reverse_transform_running = lambda: bool(_active())


def transform_running() -> bool:
    """Is any transform's function running on this thread (a dual level, vmap, a reverse level)?"""
    return bool(STATE.levels or VMAP_ACTIVE or _active())
