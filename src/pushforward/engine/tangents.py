"""The engine's tangent store: the stack of dual levels and the tangents each tensor holds at them.

A tensor keeps its tangents in `_fw`, a dict from a level's unique id to the tangent; a view
without one of its own reads its base's through the recorded view steps (docs/design.md,
"Views"). The public API over this store is `pushforward.autograd.forward_ad`.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Iterable

import numpy as np

from ..core.backend import zeros_for
from ..core.batched import BatchedTensor, new_batch_level
from ..core.tensor import Tensor, alias, mark_dual, wrap
from ..errors import OpError, OpValueError
from .pending import Pending
from .state import STATE

__all__ = [
    "enter_dual_level",
    "exit_dual_level",
    "set_tangent",
    "set_new_tangent",
    "tangent_of",
    "forced",
    "levels_of",
    "tangent_requires_grad",
    "replay_view",
    "replay_values",
    "discard_pending",
    "zero_tangent",
    "tangent_array",
    "OTHER",
]

_uids = itertools.count()
_ref = weakref.ref


class _Level:
    """One live dual level: its depth (the public level number), a process-wide unique id (the key
    of its tangents; larger for inner levels) and weak references to the tensors holding one of its
    tangents (dead references are purged as the list grows, so it stays proportional to live ones)."""

    __slots__ = (
        "index",
        "uid",
        "holders",
        "limit",
        "untracked",
        "pending",
        "pending_limit",
        "user_calls",
        "batch",
        "blevel",
    )

    def __init__(self, index: int, batch: int | None = None) -> None:
        self.index = index
        self.uid = next(_uids)
        self.holders: list[weakref.ref] = []
        self.limit = 1024
        # True: this level's tangent computations are not recorded on the tape (see untracked_level)
        self.untracked = False
        # weak references to this level's deferred tangents (see pending.py; untracked levels only)
        self.pending: list[weakref.ref] = []
        self.pending_limit = 1024
        # calls of make_dual / unpack_dual naming this level (func.jvp's untracked fast route
        # checks that the function it runs did not read or set tangents itself)
        self.user_calls = 0
        # vector mode: B tangents per tensor, held as BatchedTensors of batch level `blevel`
        self.batch = batch
        self.blevel = new_batch_level() if batch is not None else None

    def register(self, t) -> None:
        holders = self.holders
        holders.append(weakref.ref(t))
        if len(holders) > self.limit:
            self.prune()

    def prune(self) -> None:
        """Drop the references to dead holders (amortised: the limit doubles with the live ones)."""
        holders = self.holders
        holders[:] = [r for r in holders if r() is not None]
        self.limit = max(1024, 2 * len(holders))


def enter_dual_level(*, batch: int | None = None) -> int:
    """Open a new (innermost) dual level and return its index. With `batch=B` every tangent of the
    level is a batch of B tangents (vector mode: make_dual takes and unpack_dual gives shape
    (B, *primal.shape)), all propagated by one pass."""
    if batch is not None and (not isinstance(batch, (int, np.integer)) or isinstance(batch, bool) or batch < 1):
        raise OpValueError(f"dual_level: batch must be a positive int (the number of tangents), got {batch!r}")
    levels = STATE.levels
    lvl = _Level(len(levels), None if batch is None else int(batch))
    levels.append(lvl)
    STATE.by_uid[lvl.uid] = lvl
    return lvl.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level; every tangent at that level disappears."""
    levels = STATE.levels
    if not levels:
        raise OpError("exit_dual_level: no dual level is active")
    innermost = len(levels) - 1
    if level is None:
        level = innermost
    if level != innermost:
        raise OpError(
            f"exit_dual_level: level {level} is not the innermost level (innermost is {innermost}); "
            "exit levels in the reverse order they were entered"
        )
    lvl = levels.pop()
    del STATE.by_uid[lvl.uid]
    for ref in lvl.holders:
        t = ref()
        if t is not None and t._fw is not None:
            _drop_tangent(t, lvl.uid)
    lvl.holders.clear()


def _resolve_level(level: int | None, who: str) -> int:
    """The key (unique id) of public level number `level` (None: the innermost)."""
    levels = STATE.levels
    if level is None:
        if not levels:
            raise OpError(
                f"{who}: no dual level is active; wrap the code in `with pushforward.autograd.forward_ad.dual_level():`"
            )
        return levels[-1].uid
    if not isinstance(level, int) or level < 0 or level >= len(levels):
        raise OpError(
            f"{who}: dual level {level!r} does not exist (live levels: {list(range(len(levels)))}); "
            "it was never entered or has been exited"
        )
    return levels[level].uid


# -- tangent storage -------------------------------------------------------------------------


def set_tangent(x, uid: int, tangent) -> None:
    """Attach `tangent` to x at the level with unique id `uid` (no checks)."""
    fw = x._fw
    if fw is None:
        fw = x._fw = {}
        x._ad = True  # (mark_ad's write, inline: every tangent attached passes here)
    fw[uid] = tangent
    st = x._st
    if st.shared and not st.dual:
        mark_dual(st)  # views of x share this storage and must look for x's tangents
    STATE.by_uid[uid].register(x)


def set_new_tangent(x, lvl: _Level, tangent) -> None:
    """set_tangent for an op's new output (no tangent yet, on no shared storage), at the live
    level `lvl`: the executors' commonest write, in fewer steps.

    >>> import pushforward as pf
    >>> import pushforward.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = pf.tensor([1.0])
    ...     set_new_tangent(x, STATE.levels[0], pf.tensor([2.0]))
    ...     fwAD.unpack_dual(x).tangent
    tensor([2.])
    """
    if x._fw is not None or x._st.shared:  # (not new after all: the general writer)
        set_tangent(x, lvl.uid, tangent)
        return
    x._fw = {lvl.uid: tangent}
    x._ad = True  # (mark_ad's write, inline)
    holders = lvl.holders
    holders.append(_ref(x))
    if len(holders) > lvl.limit:
        lvl.prune()


def tangent_of(x, uid: int):
    """x's tangent at the level with id `uid`: its own, else the same view of its holder's (a view
    made without a tangent: docs/design.md, "Lazy view tangents") or of its base's, else None."""
    fw = x._fw
    if fw is not None and uid in fw:
        t = fw[uid]  # None here masks the base's tangent (an unpacked primal)
        return _forced(x, uid) if type(t) is Pending else t
    src = x._vsrc
    if src is not None:
        holder = src[0]
        ht = tangent_of(holder, uid)
        # (the view's own steps after the holder's: the ops, so that the tangent is a linked view)
        return None if ht is None else replay_view(ht, x._view[len(holder._view) :])
    base = x._base
    if base is not None and base._fw is not None:
        bt = base._fw.get(uid)
        if type(bt) is Pending:
            bt = _forced(base, uid)
        if bt is not None:
            return replay_view(bt, x._view)
    return None


OTHER = object()  # (tangent_array: a case the classifier decides)


def tangent_array(x, key: int):
    """The classifier's reading of one input for the arrays case, at the one live level `key`:
    x's tangent as an array (a plain tangent, its own or, for a view made without one, the view
    of its holder's that it keeps: docs/design.md, "Lazy view tangents"), None (x sees no
    tangent), or OTHER (any other case: the classifier decides).

    >>> import pushforward as pf
    >>> import pushforward.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(pf.zeros(3), pf.tensor([1.0, 2.0, 3.0]))
    ...     tangent_array(x[1:], STATE.levels[0].uid)
    array([2., 3.])
    """
    fw = x._fw
    if fw is None:
        src = x._vsrc
        if src is None:
            return None if x._base is None or x._base._fw is None else OTHER
        holder, td, a = src
        hfw = holder._fw
        if hfw is None or len(hfw) != 1 or x._requires_grad:
            return OTHER
        t = hfw.get(key)
        # (the array the view keeps, while its holder's tangent is still a plain one on the array it was made of)
        return a if type(t) is Tensor and t._data is td and not t._ad else OTHER
    t = fw.get(key) if len(fw) == 1 else None
    return t._data if type(t) is Tensor and not t._ad else OTHER


def forced(t):
    """A tangent as stored, computed if it is deferred (Pending); element-wise for a list."""
    if type(t) is Pending:
        return t.force()
    if type(t) is list:
        return [forced(x) for x in t]
    return t


def _forced(x, uid: int):
    """Compute x's deferred tangent at the level of id `uid` and store it in its place (a zero one is dropped)."""
    t = forced(x._fw[uid])
    if t is None:
        _drop_tangent(x, uid)  # only non-view outputs defer, so no base's tangent is unmasked here
    else:
        x._fw[uid] = t
    return t


def _drop_tangent(x, uid: int) -> None:
    """Remove x's own entry at the level of id `uid` (x._fw must not be None); an empty dict becomes None."""
    fw = x._fw
    fw.pop(uid, None)
    if not fw:
        x._fw = None


def discard_pending(x, level: int | None = None) -> None:
    """Forget x's tangent at `level` if it is still deferred (pending.py) and will not be read:
    the arrays its formula would have used can then be freed."""
    key = _resolve_level(level, "discard_pending")
    if x._fw is not None and type(x._fw.get(key)) is Pending:
        _drop_tangent(x, key)


def levels_of(x) -> Iterable[int]:
    """Ids of this thread's live levels at which x has a tangent (its own or its base's)."""
    fw = x._fw
    base = x._base
    live = STATE.by_uid
    src = x._vsrc
    if src is not None:  # (a lazy view tangent: its holder's levels, but for its own masks)
        found = set(levels_of(src[0]))
        if fw:
            found = (found - {lv for lv, t in fw.items() if t is None}) | {lv for lv, t in fw.items() if t is not None}
        return [lv for lv in found if lv in live]
    if base is not None and base._fw:
        masked = {lv for lv, t in fw.items() if t is None} if fw else set()
        found = {lv for lv, t in (fw or {}).items() if t is not None} | (set(base._fw) - masked)
        return [lv for lv in found if lv in live]
    return [lv for lv, t in fw.items() if t is not None and lv in live] if fw else ()


def tangent_requires_grad(x) -> bool:
    """Does a tangent of x, at a live level, require grad (so the formulas computing it are recorded)?"""
    return any(isinstance(t, Tensor) and t.requires_grad for t in (tangent_of(x, lv) for lv in levels_of(x)))


def replay_view(t, steps):
    """Apply the view steps ((fn, args), ...) recorded on a view to tensor t."""
    for fn, args in steps:
        t = fn(t, *args)
    return t


def replay_values(t, steps):
    """The values the view steps select from tensor t, whatever t's memory layout: `view` steps
    replayed as `reshape` (they select the same elements). For gradients, whose layout need not be
    the one the chain was recorded on (a `.view` after a transpose of a column-major base)."""
    for fn, args in steps:
        t = t.reshape(*args) if fn.__name__ == "view" else fn(t, *args)
    return t


def _view_alias(x, fw: dict | None):
    """A view of x (same memory, version counter and tape identity) with tangents `fw`."""
    out = alias(x)
    base = x._base
    if base is None:
        out._base = x
    else:
        out._base = base
        out._view = x._view
    out._view_version = out._st.version
    if fw:
        for lv, t in fw.items():
            set_tangent(out, lv, t)
    return out


def zero_tangent(x: Tensor, uid: int) -> Tensor:
    """A zero tangent for x at the level with id `uid` (a batch of them at a vector-mode level)."""
    d = x._data
    lvl = STATE.by_uid[uid]
    if lvl.batch is None:
        # in x's memory layout: an in-place write then fills it, and views that x allows must work
        # on its tangent too (fuzzer: hfft over dim 0 laid out as torch's, mul_, swapaxes, view)
        return wrap(np.zeros_like(d))
    if d.flags.c_contiguous:
        return BatchedTensor(wrap(zeros_for(d, (lvl.batch,) + d.shape)), lvl.blevel)
    # each batch element in x's layout too (its dims ordered by x's strides), for the same reason
    order = sorted(range(d.ndim), key=lambda i: -abs(d.strides[i]))
    z = zeros_for(d, (lvl.batch,) + tuple(d.shape[i] for i in order))
    return BatchedTensor(wrap(z.transpose([0] + [1 + order.index(i) for i in range(d.ndim)])), lvl.blevel)
