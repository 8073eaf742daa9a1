"""Forward-mode AD levels and dual tensors (PyTorch RFC-0007).

Tangents are stored on the tensor that carries them (`Tensor._fw`, level -> tangent);
each level remembers (weakly) which tensors hold one of its tangents so that exiting
the level drops them all. A view without its own tangent finds its base's.

>>> import pushforward as pf
>>> import pushforward.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     d = fwAD.make_dual(pf.tensor([0.0, 1.0]), pf.tensor([1.0, 1.0]))
...     fwAD.unpack_dual(d.sin()).tangent
tensor([1.        , 0.54030231])
"""
from __future__ import annotations

import functools
import itertools
import weakref
from collections import namedtuple
from typing import Iterable

import numpy as np

from .pending import Pending
from .state import STATE
from .._batched import BatchedTensor, broadcast_batch, new_batch_level, physical
from .._tensor import FLOATING, Tensor, alias, mark_dual, wrap
from ..errors import OpError, OpTypeError, OpValueError

__all__ = ["enter_dual_level", "exit_dual_level", "dual_level", "untracked_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


_uids = itertools.count()


class _Level:
    """One live dual level: its depth (the public level number), a process-wide unique id (the key
    of its tangents; larger for inner levels) and weak references to the tensors holding one of its
    tangents (dead references are purged as the list grows, so it stays proportional to live ones)."""

    __slots__ = ("index", "uid", "holders", "limit", "untracked", "pending", "pending_limit", "user_calls",
                 "batch", "blevel")

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


class dual_level:
    """Context manager (and decorator) that enters a dual level and exits it afterwards;
    `dual_level(batch=B)` opens a vector-mode level (B tangents per tensor, one pass).

    >>> import pushforward as pf
    >>> with dual_level(batch=2):
    ...     y = make_dual(pf.tensor([1.0, 2.0]), pf.eye(2)) ** 2
    ...     unpack_dual(y).tangent
    tensor([[2., 0.],
            [0., 4.]])
    """

    def __init__(self, *, batch: int | None = None) -> None:
        self._batch = batch

    def __enter__(self) -> int:
        self._level = enter_dual_level(batch=self._batch)
        self._entry = STATE.levels[-1]
        return self._level

    def __exit__(self, exc_type, exc, tb) -> None:
        levels = STATE.levels
        mine = self._entry
        if exc_type is not None:
            # The body raised: put the stack back as it was at entry (levels the body entered and
            # left open are exited too) and let the user's exception through, not one of ours.
            if any(lv is mine for lv in levels):
                while levels[-1] is not mine:
                    exit_dual_level()
                exit_dual_level()
            return
        if not any(lv is mine for lv in levels):
            raise OpError(f"dual_level: level {self._level} was already exited inside the `with` block")
        exit_dual_level(level=self._level)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with type(self)(batch=self._batch):
                return fn(*a, **k)

        return wrapper


class untracked_level(dual_level):
    """A dual level whose tangent computations are not recorded on the tape.

    For forward-over-reverse (hvp): the tangents still flow through backward formulas, but
    nothing will differentiate the tangents themselves with respect to the primals, so their
    formulas run on bare arrays and the tape keeps no tangent intermediates alive. While a
    tape is recorded, a tangent is only computed when read (pending.py): the forward pass's
    tangents that no backward formula reads cost nothing.
    Reverse-over-forward through this level is therefore not available.
    """

    def __enter__(self) -> int:
        level = super().__enter__()
        STATE.levels[level].untracked = True
        return level


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
        raise OpError(f"{who}: dual level {level!r} does not exist (live levels: {list(range(len(levels)))}); "
                      "it was never entered or has been exited")
    return levels[level].uid


# -- tangent storage -------------------------------------------------------------------------

def set_tangent(x, level: int, tangent) -> None:
    """Attach `tangent` to x at the level with unique id `level` (no checks)."""
    fw = x._fw
    if fw is None:
        fw = x._fw = {}
        x._ad = True
    fw[level] = tangent
    st = x._st
    if st.shared:
        mark_dual(st)  # views of x share this storage and must look for x's tangents
    STATE.by_uid[level].register(x)


def tangent_of(x, level: int):
    """x's tangent at the level with id `level`: its own, else the same view of its base's, else None."""
    fw = x._fw
    if fw is not None and level in fw:
        t = fw[level]  # None here masks the base's tangent (an unpacked primal)
        return _forced(x, level) if type(t) is Pending else t
    base = x._base
    if base is not None and base._fw is not None:
        bt = base._fw.get(level)
        if type(bt) is Pending:
            bt = _forced(base, level)
        if bt is not None:
            return replay_view(bt, x._view)
    return None


def _forced(x, level: int):
    """Compute x's deferred tangent at `level` and store it in its place (a zero one is dropped)."""
    t = x._fw[level].force()
    if t is None:
        _drop_tangent(x, level)  # only non-view outputs defer, so no base's tangent is unmasked here
    else:
        x._fw[level] = t
    return t


def _drop_tangent(x, level: int) -> None:
    """Remove x's own entry at `level` (x._fw must not be None); an empty dict becomes None."""
    fw = x._fw
    fw.pop(level, None)
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
    if base is not None and base._fw:
        masked = {lv for lv, t in fw.items() if t is None} if fw else set()
        found = {lv for lv, t in (fw or {}).items() if t is not None} | (set(base._fw) - masked)
        return [lv for lv in found if lv in live]
    return [lv for lv, t in fw.items() if t is not None and lv in live] if fw else ()


def tangents_below(x, level: int) -> dict | None:
    """x's tangents at levels strictly below `level` (outer levels), own or inherited."""
    out = {}
    for lv in levels_of(x):
        if lv < level:
            out[lv] = tangent_of(x, lv)
    return out or None


def replay_view(t, steps):
    """Apply the view steps ((fn, args), ...) recorded on a view to tensor t."""
    for fn, args in steps:
        t = fn(t, *args)
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


# -- public API ----------------------------------------------------------------------------

def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: a view of `tensor` whose tangent at `level` is `tangent`.

    The result shares memory with `tensor`; tangents of other levels are kept.
    Differentiable (reverse mode) with respect to both `tensor` and `tangent`.
    At a vector-mode level (`dual_level(batch=B)`) the tangent has shape (B, *tensor.shape).
    """
    level = _resolve_level(level, "make_dual")
    lvl = STATE.by_uid[level]
    lvl.user_calls += 1
    if not isinstance(tensor, Tensor):
        raise OpTypeError(f"make_dual: expected the primal to be a Tensor, got {type(tensor).__name__}")
    if not isinstance(tangent, Tensor):
        raise OpTypeError(f"make_dual: expected the tangent to be a Tensor, got {type(tangent).__name__}")
    if (type(tangent) is BatchedTensor and lvl.batch is not None and tangent._blevel == lvl.blevel
            and type(tensor) is not BatchedTensor):
        tangent = tangent._phys  # this level's tangent as tangent_of gives it (transforms re-make duals)
    if type(tensor) is BatchedTensor or type(tangent) is BatchedTensor:
        return _make_dual_batched(tensor, tangent, level)
    pd, td = tensor._data, tangent._data
    if pd.dtype.kind not in FLOATING:
        raise OpValueError(f"make_dual: only floating point or complex tensors can be made dual; the primal has dtype {pd.dtype}")
    if td.dtype.kind not in FLOATING:
        raise OpValueError(f"make_dual: the tangent must be floating point or complex; got dtype {td.dtype}")
    want = pd.shape if lvl.batch is None else (lvl.batch,) + pd.shape
    if td.shape != want:
        if lvl.batch is None:
            raise OpError(f"make_dual: tangent shape {tuple(td.shape)} does not match primal shape {tuple(pd.shape)}")
        raise OpError(f"make_dual: at a level of batch {lvl.batch} the tangent must have shape (batch, *primal.shape) "
                      f"= {want}; got {tuple(td.shape)}")
    if td.dtype != pd.dtype:
        if td.dtype.kind != pd.dtype.kind:  # complex vs real: no R-linear reading of the tangent
            raise OpError(f"make_dual: tangent dtype {td.dtype} does not match primal dtype {pd.dtype} "
                          "(a real primal needs a real tangent, a complex one a complex tangent)")
        tangent = tangent.to(pd.dtype)  # float32 <-> float64: cast as torch does (differentiably)
    if tangent_of(tensor, level) is not None:
        raise OpError(f"make_dual: the primal already has a tangent at level {lvl.index}; unpack_dual it first")
    if lvl.batch is not None:
        tangent = BatchedTensor(tangent, lvl.blevel)
    fw = {lv: tangent_of(tensor, lv) for lv in levels_of(tensor)}
    fw[level] = tangent
    return _view_alias(tensor, fw)


def _make_dual_batched(tensor: Tensor, tangent: Tensor, level: int) -> Tensor:
    """make_dual inside vmap: the tangent lives on the primal's physical tensor (one per batch
    element), so the primal's batch level is unwrapped from both."""
    if type(tensor) is not BatchedTensor:
        raise OpError("make_dual: a batched tangent (inside vmap) needs a batched primal; give the primal "
                      "in_dims too")
    lvl = STATE.by_uid[level]
    blevel = tensor._blevel
    size = tensor._phys.shape[0]
    if type(tangent) is BatchedTensor and tangent._blevel > blevel:
        raise OpError("make_dual: the tangent is batched at a vmap level inside the primal's; not supported")
    if lvl.batch is None:  # the physical primal gets the physical tangent (one per batch element)
        phys_t = tangent._phys if type(tangent) is BatchedTensor and tangent._blevel == blevel else \
            broadcast_batch(tangent, size)
    else:  # a vector-mode level inside vmap: the physical tangent is (B, size, ...), vmap's dim second
        phys_t = tangent._phys.movedim(0, 1) if type(tangent) is BatchedTensor and tangent._blevel == blevel else \
            broadcast_batch(tangent, size, 1)
    return BatchedTensor(make_dual(tensor._phys, phys_t, level=lvl.index), blevel)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor` at `level`; primal is a view without that tangent.
    At a vector-mode level the tangent has shape (B, *tensor.shape)."""
    levels = STATE.levels
    if level is None and not levels:
        return UnpackedDualTensor(tensor, None)
    level = _resolve_level(level, "unpack_dual")
    lvl = STATE.by_uid[level]
    lvl.user_calls += 1
    if type(tensor) is BatchedTensor:
        p, t = unpack_dual(tensor._phys, level=lvl.index)
        if t is not None and lvl.batch is not None:
            t = t.movedim(1, 0)  # (B, size, ...) -> vmap's dim first
        return UnpackedDualTensor(BatchedTensor(p, tensor._blevel), None if t is None else BatchedTensor(t, tensor._blevel))
    t = tangent_of(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    fw = {lv: tangent_of(tensor, lv) for lv in levels_of(tensor) if lv != level}
    fw[level] = None  # mask: the primal must not see its base's tangent at this level
    if lvl.batch is not None:
        t = physical(t, lvl.blevel, lvl.batch)  # the (B, ...) tensor the user sees
    return UnpackedDualTensor(_view_alias(tensor, fw), t)


def zero_tangent(x: Tensor, level: int) -> Tensor:
    """A zero tangent for x at the level with id `level` (a batch of them at a vector-mode level)."""
    d = x._data
    lvl = STATE.by_uid[level]
    if lvl.batch is None:
        # in x's memory layout: an in-place write then fills it, and views that x allows must work
        # on its tangent too (fuzzer: hfft over dim 0 laid out as torch's, mul_, swapaxes, view)
        return wrap(np.zeros_like(d))
    return BatchedTensor(wrap(np.zeros((lvl.batch,) + d.shape, d.dtype)), lvl.blevel)


def __dir__() -> list:
    # public names only (issue 10): what the module imports is not part of its API
    return sorted(set(__all__))
