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
from collections import namedtuple

import numpy as np

from ..core.batched import BatchedTensor, broadcast_batch, physical
from ..core.tensor import FLOATING, Tensor
from ..engine.registry import OPS as DISPATCH_OPS
from ..kernels.strided import storage_of
from ..engine.state import STATE
from ..engine.tangents import _resolve_level, _view_alias, enter_dual_level, exit_dual_level, levels_of, tangent_of
from ..errors import NestingError, OpError, OpTypeError, OpValueError
from ..core.namespace import public_dir as _public_dir

__all__ = [
    "enter_dual_level",
    "exit_dual_level",
    "dual_level",
    "untracked_level",
    "make_dual",
    "unpack_dual",
    "UnpackedDualTensor",
]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


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


def _is_fwd_grad_enabled() -> bool:
    """torch's private query: is forward AD on (see _set_fwd_grad_enabled)?"""
    return getattr(STATE, "fw_off", None) is None


class _set_fwd_grad_enabled:
    """torch's private switch (set when made, restored on exit as a context manager): with False,
    ops ignore the tangents of the levels open now, as if none were; a level entered meanwhile (a
    func.jvp inside) works. Custom Functions' forward runs with it off, as in torch.

    >>> import pushforward as pf
    >>> with _set_fwd_grad_enabled(False):
    ...     _is_fwd_grad_enabled()
    False
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _is_fwd_grad_enabled()
        _switch_fwd_grad(bool(mode))

    def __enter__(self) -> _set_fwd_grad_enabled:
        return self

    def __exit__(self, *exc: object) -> None:
        _switch_fwd_grad(self.prev)


def _switch_fwd_grad(mode: bool) -> None:
    off = getattr(STATE, "fw_off", None)
    if not mode and off is None:
        STATE.fw_off = (STATE.levels, STATE.by_uid)
        STATE.levels, STATE.by_uid = [], {}
    elif mode and off is not None:
        levels, by_uid = off
        levels.extend(STATE.levels)  # (levels entered while off and still open)
        by_uid.update(STATE.by_uid)
        STATE.levels, STATE.by_uid, STATE.fw_off = levels, by_uid, None


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
    for what, v in (("primal", tensor), ("tangent", tangent)):
        if type(v) is not Tensor and type(v) is not BatchedTensor and getattr(type(v), "_interpreter", None):
            # a tensor of an enclosing transform that runs ops by its own rules (a sparsity pattern, a
            # Taylor series): a dual of its array would drop what it carries; the enclosing transform
            # takes another way (docs/design.md, "Nested transforms")
            raise NestingError(
                f"make_dual: the {what} is a {type(v).__name__} of an enclosing transform, which a dual "
                "level cannot carry"
            )
    if (
        type(tangent) is BatchedTensor
        and lvl.batch is not None
        and tangent._blevel == lvl.blevel
        and type(tensor) is not BatchedTensor
    ):
        tangent = tangent._phys  # this level's tangent as tangent_of gives it (transforms re-make duals)
    if type(tensor) is BatchedTensor or type(tangent) is BatchedTensor:
        return _make_dual_batched(tensor, tangent, level)
    pd, td = tensor._data, tangent._data
    if pd.dtype.kind not in FLOATING:
        raise OpValueError(
            "make_dual: Expected primal to be floating point or complex (only those can be made dual), "
            f"but got: {pd.dtype}"
        )
    if td.dtype.kind not in FLOATING:
        raise OpValueError(f"make_dual: Expected tangent to be floating point or complex, but got: {td.dtype}")
    want = pd.shape if lvl.batch is None else (lvl.batch,) + pd.shape
    if td.shape != want:
        if lvl.batch is None:
            raise OpError(
                "make_dual: Trying to set a forward gradient that has a different size than that of the primal: "
                f"tangent shape {tuple(td.shape)} does not match primal shape {tuple(pd.shape)}"
            )
        raise OpError(
            f"make_dual: at a level of batch {lvl.batch} the tangent must have shape (batch, *primal.shape) "
            f"= {want}; got {tuple(td.shape)}"
        )
    if td.dtype != pd.dtype:
        if td.dtype.kind != pd.dtype.kind:  # complex vs real: no R-linear reading of the tangent
            raise OpError(
                f"make_dual: tangent dtype {td.dtype} does not match primal dtype {pd.dtype} "
                "(a real primal needs a real tangent, a complex one a complex tangent)"
            )
        tangent = tangent.to(pd.dtype)  # float32 <-> float64: cast as torch does (differentiably)
    if tangent_of(tensor, level) is not None:
        raise OpError(f"make_dual: the primal already has a tangent at level {lvl.index}; unpack_dual it first")
    if tangent_of(tangent, level) is not None:
        raise OpError(
            f"make_dual: the tangent has a forward gradient at the same level ({lvl.index}): a tangent cannot be "
            "dual at its own level; pass unpack_dual(tangent).primal"
        )
    if lvl.batch is None and tensor._base is None and _storage_differs(pd, td):
        # torch's rule for a primal that views part of a larger memory without being a view of another
        # tensor (a detached slice): a copy of the tangent laid out in a memory like the primal's
        # (zeros elsewhere), so as_strided reads the tangent where it reads the primal. (The primal of
        # a view keeps the caller's tangent: an in-place op writes its tangent back there, RFC-0007.)
        tangent = _mirrored(tangent, pd)
    if lvl.batch is not None:
        tangent = BatchedTensor(tangent, lvl.blevel)
    fw = {lv: tangent_of(tensor, lv) for lv in levels_of(tensor)}
    fw[level] = tangent
    return _view_alias(tensor, fw)


def _storage_differs(pd, td) -> bool:
    """Do a primal's and a tangent's arrays (same shape) view memories of different sizes?"""
    if type(pd) is not np.ndarray or type(td) is not np.ndarray or not pd.size:
        return False
    if not (_dense(pd) and _dense(td)):
        return False
    return _memory_size(pd) != _memory_size(td)


def _dense(a) -> bool:
    b = a
    while isinstance(b.base, np.ndarray):
        b = b.base
    return b.flags.c_contiguous or b.flags.f_contiguous


def _mirrored(tangent: Tensor, pd) -> Tensor:
    """tangent copied into zeros laid out like pd's memory, at pd's place in it (differentiably)."""
    if any(st < 0 for st in pd.strides):  # (as_strided takes no negative strides)
        return tangent.clone()
    flat, off = storage_of(pd)
    buf = DISPATCH_OPS.zeros(flat.size, dtype=tangent.dtype)
    mirror = DISPATCH_OPS.as_strided(buf, pd.shape, [st // pd.itemsize for st in pd.strides], off)
    return mirror.copy_(tangent)


def _memory_size(a) -> int:
    flat, _ = storage_of(a)
    return flat.nbytes


def _make_dual_batched(tensor: Tensor, tangent: Tensor, level: int) -> Tensor:
    """make_dual inside vmap: the tangent lives on the primal's physical tensor (one per batch
    element), so the primal's batch level is unwrapped from both."""
    if type(tensor) is not BatchedTensor:
        # a primal vmap does not batch (closed over, as in vmap(lambda t: jvp(f, (x,), (t,)))) with a
        # batched tangent: the same primal for every batch element, repeated along the batch (no copy)
        tensor = BatchedTensor(broadcast_batch(tensor, tangent._phys.shape[0]), tangent._blevel)
    lvl = STATE.by_uid[level]
    blevel = tensor._blevel
    size = tensor._phys.shape[0]
    if type(tangent) is BatchedTensor and tangent._blevel > blevel:
        raise OpError("make_dual: the tangent is batched at a vmap level inside the primal's; not supported")
    if lvl.batch is None:  # the physical primal gets the physical tangent (one per batch element)
        phys_t = (
            tangent._phys
            if type(tangent) is BatchedTensor and tangent._blevel == blevel
            else broadcast_batch(tangent, size)
        )
    else:  # a vector-mode level inside vmap: the physical tangent is (B, size, ...), vmap's dim second
        phys_t = (
            tangent._phys.movedim(0, 1)
            if type(tangent) is BatchedTensor and tangent._blevel == blevel
            else broadcast_batch(tangent, size, 1)
        )
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
        return UnpackedDualTensor(
            BatchedTensor(p, tensor._blevel), None if t is None else BatchedTensor(t, tensor._blevel)
        )
    t = tangent_of(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    fw = {lv: tangent_of(tensor, lv) for lv in levels_of(tensor) if lv != level}
    fw[level] = None  # mask: the primal must not see its base's tangent at this level
    if lvl.batch is not None:
        t = physical(t, lvl.blevel, lvl.batch)  # the (B, ...) tensor the user sees
    return UnpackedDualTensor(_view_alias(tensor, fw), t)


def __getattr__(name: str) -> int:
    # torch's private `_current_level` (the innermost open level, -1 when none), read by code that
    # closes every level it left open (`while fwAD._current_level >= 0: fwAD.exit_dual_level()`)
    if name == "_current_level":
        return len(STATE.levels) - 1
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__dir__ = _public_dir(globals())
